"""What a person may grant an OAuth client on the consent page: no more than their role may make on the Tokens
page. The tools are their roles' RoleScope (admins every tool, other roles nothing, until an admin sets them);
the expiry at most OAUTH_GRANT_MAX_DAYS, never "never"."""

from django.conf import settings

from approvals import roles
from approvals.oauth.models import RoleScope

# What a role without a RoleScope row grants: what it may make on the Tokens page.
UNSET = {roles.ADMIN: ["*"]}
OFFERED_DAYS = (1, 7, 30, 90)
PREFERRED_DAYS = 30


def role_globs(user) -> list[str]:
    """The tool patterns this person may grant: those of each role they hold, all tools for a superuser."""
    if user.is_superuser:
        return ["*"]
    held = list(user.groups.filter(name__in=roles.ROLES).values_list("name", flat=True))
    set_by_admins = dict(RoleScope.objects.filter(role__in=held).values_list("role", "tool_globs"))
    globs = [glob for role in held for glob in set_by_admins.get(role, UNSET.get(role, []))]
    return list(dict.fromkeys(globs))


def expiry_days() -> list[int]:
    """The lives the consent page offers a grant, in days, up to OAUTH_GRANT_MAX_DAYS and that one included."""
    most = settings.OAUTH_GRANT_MAX_DAYS
    return sorted({days for days in OFFERED_DAYS if days < most} | {most})


def preferred_days() -> int:
    return min(PREFERRED_DAYS, settings.OAUTH_GRANT_MAX_DAYS)
