from django.contrib import admin

from approvals.models import Server, Tool, ToolChange


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ["name", "transport", "trusted", "enabled", "health", "revision", "last_sync_at"]
    list_filter = ["transport", "trusted", "enabled", "health"]
    search_fields = ["name", "slug", "url", "command"]
    # Upstream credentials are never rendered back, not even to admins: the console's
    # own server form replaces them without showing them.
    exclude = ["headers", "env"]
    readonly_fields = ["revision", "server_info", "capabilities", "instructions", "health", "last_error", "last_sync_at", "last_checked_at"]


@admin.register(Tool)
class ToolAdmin(admin.ModelAdmin):
    list_display = ["exposed_name", "server", "status", "last_changed_at"]
    list_filter = ["status", "server"]
    search_fields = ["exposed_name", "upstream_name"]
    readonly_fields = [f.name for f in Tool._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(ToolChange)
class ToolChangeAdmin(admin.ModelAdmin):
    list_display = ["tool", "kind", "status", "at"]
    list_filter = ["kind"]
    readonly_fields = [f.name for f in ToolChange._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
