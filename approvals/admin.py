from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db import models, transaction
from django.urls import reverse
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.models import AccessToken, Application, Grant, IDToken, RefreshToken

from approvals.actions import servers
from approvals.actions.person_access import acting_as
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.audit.snapshots import snapshot
from approvals.calls.models import Call
from approvals.catalog import sync
from approvals.catalog.models import Server, Tool, ToolChange
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate
from approvals.inputs.models import InputRequest
from approvals.oauth.models import RoleScope
from approvals.policy.models import PolicyRule
from approvals.signin.forms import ThrottledAdminAuthenticationForm
from approvals.slack.models import SlackLink
from approvals.tokens.models import ClientToken

CREDENTIALS = ("usable_password", "client_secret")


def secret_fields(obj, names) -> list[str]:
    # Credentials and password hashes: the log says that they changed, never what to.
    declared = getattr(type(obj), "SECRET_FIELDS", ())
    return [name for name in names if name in declared or name.startswith("password") or name in CREDENTIALS]


def subjects(obj):
    """The subject ids the audit page filters on."""
    if isinstance(obj, Server):
        return {"server": obj}
    if isinstance(obj, Tool):
        return {"tool": obj, "server": obj.server_id}
    if isinstance(obj, ClientToken):
        return {"token": obj}
    return {}


class AuditedAdmin(admin.ModelAdmin):
    """Every add, change and delete made through Django admin is also an audit event.

    Django admin calls the log_* hooks inside the transaction of the change itself,
    so the event and the change land together. save_model notes the values before.
    """

    def save_model(self, request, obj, form, change):
        stored = type(obj)._default_manager.filter(pk=obj.pk).first() if change else None
        names = list(form.changed_data)
        before = snapshot(stored, names, secret_fields(stored, names)) if stored is not None else {}
        self.noted(request)[id(obj)] = (names, before)
        super().save_model(request, obj, form, change)

    def noted(self, request):
        if not hasattr(request, "_audit_before"):
            request._audit_before = {}
        return request._audit_before

    def record_save(self, action, request, obj, message):
        names, before = self.noted(request).pop(id(obj), ([], {}))
        chain.record(
            action,
            Actor.user(request.user),
            **subjects(obj),
            data={
                "model": obj._meta.label_lower,
                "object_id": str(obj.pk),
                "object": str(obj)[:200],
                "message": message,
                "before": before,
                "after": snapshot(obj, names, secret_fields(obj, names)),
            },
        )

    def log_addition(self, request, obj, message):
        self.record_save("admin.added", request, obj, message)
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        self.record_save("admin.changed", request, obj, message)
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        for obj in queryset:
            chain.record(
                "admin.deleted",
                Actor.user(request.user),
                **subjects(obj),
                data={
                    "model": obj._meta.label_lower,
                    "object_id": str(obj.pk),
                    "object": str(obj)[:200],
                },
            )
        return super().log_deletions(request, queryset)

    def response_action(self, request, queryset):
        # Admin actions, the bulk delete among them, run outside any transaction of
        # their own: without one, an event could outlive a deletion that failed.
        with transaction.atomic():
            return super().response_action(request, queryset)


# Django admin's own sign-in page counts failures like the console's.
admin.site.login_form = ThrottledAdminAuthenticationForm

admin.site.unregister(User)
admin.site.unregister(Group)
# OAuth tokens and codes are the grants' business (the Tokens page revokes them);
# the clients an admin registers are audited like every other change here.
for model in (Application, AccessToken, Grant, IDToken, RefreshToken):
    admin.site.unregister(model)


@admin.register(Application)
class AuditedApplicationAdmin(AuditedAdmin, ApplicationAdmin):
    pass


@admin.register(RoleScope)
class RoleScopeAdmin(AuditedAdmin):
    """What each role may let an OAuth client use on the consent page (approvals.oauth.consent_limits)."""

    list_display = ("role", "tool_globs")


@admin.register(SlackLink)
class SlackLinkAdmin(AuditedAdmin):
    """The Slack users who decide as people (approvals/slack/linking): seen and removed here, made only by the person
    on their account page or by a confirmed email."""

    list_display = ("user", "team_id", "slack_user_id", "slack_name", "how", "linked_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(User)
class AuditedUserAdmin(AuditedAdmin, UserAdmin):
    """A person deactivated, left without a role or deleted here loses every credential (actions/person_access),
    recorded as ended by the admin who did it."""

    def save_model(self, request, obj, form, change):
        with acting_as(request.user):
            super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        with acting_as(request.user):
            super().save_related(request, form, formsets, change)

    def delete_model(self, request, obj):
        with acting_as(request.user):
            super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        with acting_as(request.user):
            super().delete_queryset(request, queryset)


@admin.register(Group)
class AuditedGroupAdmin(AuditedAdmin, GroupAdmin):
    pass


@admin.register(Server)
class ServerAdmin(AuditedAdmin):
    list_display = ["name", "transport", "trusted", "enabled", "health", "revision", "last_sync_at"]
    list_filter = ["transport", "trusted", "enabled", "health"]
    search_fields = ["name", "slug", "url", "command"]
    # Upstream credentials are never rendered back, not even to admins: the console's
    # own server form replaces them without showing them.
    exclude = ["headers", "env"]
    readonly_fields = [
        "revision",
        "server_info",
        "capabilities",
        "instructions",
        "health",
        "last_error",
        "last_sync_at",
        "last_checked_at",
    ]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    # Added, changed or deleted here as on the console's own pages: a new endpoint is synced and what it lists
    # goes through review; sessions to the server as it was close, and its calls waiting to run are cancelled.
    def save_model(self, request, obj, form, change):
        stored = Server.objects.filter(pk=obj.pk).first() if change else None
        if stored is not None:
            servers.forget_era(stored, obj)
        super().save_model(request, obj, form, change)
        if stored is not None:
            servers.follow_change(stored, obj, Actor.user(request.user))
        elif obj.enabled:
            sync.enqueue_sync(obj)

    def delete_model(self, request, obj):
        servers.delete_server(obj, Actor.user(request.user))

    def delete_queryset(self, request, queryset):
        for server in queryset:
            servers.delete_server(server, Actor.user(request.user))


@admin.register(Tool)
class ToolAdmin(AuditedAdmin):
    list_display = ["exposed_name", "server", "status", "last_changed_at"]
    list_filter = ["status", "server"]
    search_fields = ["exposed_name", "upstream_name"]
    readonly_fields = [f.name for f in Tool._meta.fields]

    def has_add_permission(self, request):
        return False


class RecordAdmin(admin.ModelAdmin):
    """Rows that are a record of what happened: shown to admins, never changed or deleted here."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ConsoleOwnedAdmin(RecordAdmin):
    """Rows the console changes on its own pages, where each change is checked and audited one way only."""

    console_page = ""

    def changelist_view(self, request, extra_context=None):
        where = reverse(self.console_page)
        messages.info(request, f"Read-only here: change these on the console's page {where}.")
        return super().changelist_view(request, extra_context)


@admin.register(PolicyRule)
class PolicyRuleAdmin(ConsoleOwnedAdmin):
    console_page = "rules"
    list_display = ["position", "name", "action", "server", "tool_glob", "client", "enabled", "uid"]
    list_filter = ["action", "enabled"]
    search_fields = ["name", "tool_glob"]


@admin.register(ClientToken)
class ClientTokenAdmin(ConsoleOwnedAdmin):
    console_page = "tokens"
    list_display = ["name", "prefix", "tool_globs", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["name", "prefix"]
    # The hash of a secret is of no use to a reader and of some to an attacker.
    exclude = ["token_hash"]


@admin.register(Resource, ResourceTemplate, Prompt)
class SurfaceItemAdmin(RecordAdmin):
    list_display = ["exposed_name", "server", "status", "last_changed_at"]
    list_filter = ["status", "server"]
    search_fields = ["exposed_name", "upstream_name"]


@admin.register(ToolChange)
class ToolChangeAdmin(RecordAdmin):
    list_display = ["tool", "kind", "status", "at"]
    list_filter = ["kind"]


@admin.register(Call)
class CallAdmin(RecordAdmin):
    list_display = ["id", "kind", "tool_name", "token", "status", "decided_by_name", "received_at"]
    list_filter = ["kind", "status", "era"]
    search_fields = ["tool_name", "request_id"]


@admin.register(InputRequest)
class InputRequestAdmin(RecordAdmin):
    list_display = ["id", "call", "server", "method", "status", "created_at"]
    list_filter = ["status", "method"]
