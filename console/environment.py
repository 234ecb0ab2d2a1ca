"""What every settings module reads the environment with, and where an embedded console keeps its files."""

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONSOLE_VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def redis_database(url: str) -> str:
    """The database number a Redis URL selects, as redis-py reads it: ?db=, else the path (not a socket's)."""
    parts = urlsplit(url)
    chosen = parse_qs(parts.query).get("db") or ([] if parts.scheme == "unix" else [parts.path.strip("/")])
    return chosen[0] if chosen and chosen[0].isdigit() else "0"


def private_var_dir():
    # Its keys, database and witness are the console's alone: a stdio server run as another user must not
    # read them, whatever the umask made of the files inside.
    VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    if VAR_DIR.stat().st_uid == os.geteuid():
        VAR_DIR.chmod(0o700)


def embedded_secret(name):
    # An embedded console keeps random keys on disk so that sessions, signed state and
    # the audit chain survive a restart; production sets each key explicitly.
    path = VAR_DIR / name
    private_var_dir()
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()
