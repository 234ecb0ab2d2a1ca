"""What a change of a row records of it, before and after: each value as JSON keeps it, and never a secret.

Every admin's change (a server, a client token, a rule, a webhook endpoint, any row
changed through Django admin) records its fields as `snapshot` gives them, so a value
reads alike in every event: a related row by its name, a time in UTC ISO 8601. A field
named among `secrets` is recorded only as `redacted` shows it.
"""

import datetime
from urllib.parse import urlsplit

from django.core.exceptions import FieldDoesNotExist

SECRET = "(secret)"
JSON_SCALARS = (str, int, float, bool, type(None))


def snapshot(row, fields, secrets=()) -> dict:
    return {name: redacted(getattr(row, name)) if name in secrets else shown(row, name) for name in fields}


def redacted(value):
    """What the log may keep of a secret: the names of credentials given by name (a server's headers or
    environment), the origin of a URL whose path or query may hold one (Slack's webhooks), else SECRET."""
    if isinstance(value, dict):
        return sorted(value)
    if isinstance(value, str) and (url := urlsplit(value)).scheme in ("http", "https") and url.netloc:
        return f"{url.scheme}://{url.netloc}" + ("/…" if url.path.strip("/") or url.query else "")
    return SECRET


def shown(row, name: str):
    try:
        field = row._meta.get_field(name)
    except FieldDoesNotExist:
        return "(not a stored field)"
    if field.many_to_many:
        return sorted(str(related) for related in getattr(row, name).all()) if row.pk else []
    value = getattr(row, name)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).isoformat(timespec="seconds")
    return value if isinstance(value, (*JSON_SCALARS, list, dict)) else str(value)
