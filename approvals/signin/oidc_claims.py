"""What an identity provider's claims say about a person's roles in the console. Plain Python: no Django.

OIDC_ROLE_MAP maps the provider's group names to the console's roles; OIDC_ROLES_CLAIM names the claim that
lists a person's groups. Only what the map names counts: a group it does not name gives no role, and a claim
of the wrong shape gives none either, so nothing but the map can make anyone an admin.
"""


def parse_role_map(text: str) -> dict[str, str]:
    """`mcp-admins=admin,mcp-operators=operator` as {group: role}; ValueError saying what is wrong."""
    mapping = {}
    for item in text.split(","):
        if not item.strip():
            continue
        # The role is last: a group name may hold '=' (an LDAP DN does), a role's never does.
        group, sep, role = item.rpartition("=")
        group, role = group.strip(), role.strip()
        if not sep or not group or not role:
            raise ValueError(f"OIDC_ROLE_MAP: {item.strip()!r} is not GROUP=ROLE")
        if mapping.get(group, role) != role:
            raise ValueError(f"OIDC_ROLE_MAP: {group!r} maps to both {mapping[group]!r} and {role!r}")
        mapping[group] = role
    return mapping


def claimed_groups(claims: dict, name: str) -> list[str]:
    """The groups `claims` lists under `name`: a list of strings, or one string. A dotted name the claims do not hold
    as such reaches into objects, as some providers nest roles (`realm_access.roles`)."""
    value = claims.get(name)
    if name not in claims and "." in name:
        value = claims
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [group for group in value if isinstance(group, str)]
    return []


def roles_for(groups: list[str], role_map: dict[str, str]) -> set[str]:
    return {role_map[group] for group in groups if group in role_map}
