"""What every settings module reads the environment with, and where an embedded console keeps its files."""

import contextlib
import os
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONSOLE_VAR_DIR", BASE_DIR / "var"))
CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL


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


def private_file(path) -> None:
    """Makes `path` the console's alone (0600), creating it empty when it is missing: a stdio server run as
    another user must not read it, whatever the umask. A SQLite database takes an empty file as a new one, and
    its -wal and -shm files take the database's mode."""
    path = Path(path)
    if path.exists():
        if path.stat().st_uid == os.geteuid():
            path.chmod(0o600)
    elif path.parent.is_dir():
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, CREATE_NEW, 0o600))


def embedded_secret(name):
    # An embedded console keeps random keys on disk so that sessions, signed state and
    # the audit chain survive a restart; production sets each key explicitly.
    path = VAR_DIR / name
    private_var_dir()
    if not path.exists():
        # Created 0600: never, even for a moment, readable by another user.
        with contextlib.suppress(FileExistsError), os.fdopen(os.open(path, CREATE_NEW, 0o600), "w") as created:
            created.write(secrets.token_urlsafe(50))
    private_file(path)
    return path.read_text().strip()


def secret(name, embedded):
    """A key from the environment, else from the file NAME_FILE names, else embedded_secret(`embedded`)."""
    return given_secret(name) or embedded_secret(embedded)


def given_secret(name) -> str:
    """A secret from the environment, else from the file NAME_FILE names, else "".

    A file keeps it out of the environment of whatever starts the console (a shell, make), which stays readable
    in that process's /proc/<pid>/environ while the console runs."""
    if os.environ.get(name):
        return os.environ[name]
    if os.environ.get(f"{name}_FILE"):
        return Path(os.environ[f"{name}_FILE"]).read_text().strip()
    return ""
