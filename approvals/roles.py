"""The three roles are Django groups; one person may hold several."""

from django.contrib.auth.models import Group, Permission, User
from django.db.models import Q

ADMIN, OPERATOR, AUDITOR = "admin", "operator", "auditor"
ROLES = (ADMIN, OPERATOR, AUDITOR)

READ = ["view_server", "view_tool", "view_toolchange", "view_call", "view_policyrule", "view_clienttoken"]
# The audit log: auditors read, verify and export it; admins read it and alone change how long
# it is kept. Operators see the history of the calls they decided without any of these.
PERMISSIONS = {
    ADMIN: READ
    + [
        "add_server",
        "change_server",
        "delete_server",
        "add_policyrule",
        "change_policyrule",
        "delete_policyrule",
        "decide_call",
        "manage_tokens",
        "manage_webhooks",
        "view_auditevent",
        "change_auditsettings",
    ],
    OPERATOR: READ + ["decide_call"],
    AUDITOR: READ + ["view_auditevent", "export_audit"],
}

VIEW_CALLS = "approvals.view_call"
DECIDE_CALLS = "approvals.decide_call"


def ensure_roles(**kwargs):
    for name, codenames in PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(Permission.objects.filter(content_type__app_label="approvals", codename__in=codenames))


def has_role(user):
    """Whether a signed-in user holds one of the three roles; a superuser holds them all."""
    return user.is_superuser or user.groups.filter(name__in=ROLES).exists()


def in_standing(user_id) -> bool:
    """Whether the person may act in the console at all, by any credential: active, and holding a role."""
    holds = User.objects.filter(pk=user_id, is_active=True)
    return holds.filter(Q(is_superuser=True) | Q(groups__name__in=ROLES)).exists()


def is_admin(user):
    return user.is_superuser or user.has_perm("approvals.change_server")


def can_view_calls(user):
    return user.is_authenticated and user.has_perm(VIEW_CALLS)


def can_decide(user):
    return user.is_authenticated and user.has_perm(DECIDE_CALLS)
