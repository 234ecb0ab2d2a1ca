"""The findings as they were made: a stdio server added with add_server and called through /mcp, by a console
run as root (this process, when the tests run as root) and by one run as an ordinary user under a dumpable shell
that holds keys (ordinary_console.py); and add_server refusing a server that could not start isolated."""

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from subprocess import PIPE

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.urls import reverse

from approvals.catalog.models import Server
from approvals.catalog.specs import stdio_isolation
from approvals.upstream import isolation, probe
from approvals.upstream.isolation import DEFAULT_USER, account
from tests.fixtures.servers import REPO
from tests.upstream.machine import python_for, python_within_reach, require_sandbox
from tests.upstream.prying import KEYS, PRYING, add_prying_server, assert_all_refused, isolation_line, pry_through_mcp

ORDINARY_CONSOLE = Path(__file__).with_name("ordinary_console.py")


@pytest.mark.parametrize("mode", ["auto", "user", "bubblewrap"])
def test_it_never_runs_a_stdio_server_as_root(mode, settings):
    settings.STDIO_ISOLATION, settings.STDIO_USER = mode, "root"
    assert "STDIO_USER 'root' is root (uid 0): name an unprivileged user" in probe.describe(stdio_isolation())


def a_root_console_without_mcp_stdio(monkeypatch, settings):
    monkeypatch.setattr(isolation, "console_is_root", lambda: True)
    monkeypatch.setattr(isolation, "account", lambda name: None if name == DEFAULT_USER else account(name))
    return (
        "the console runs as root, and a stdio server never does: there is no user 'mcp-stdio' to run them as: "
        f"create it (`{isolation.ADD_DEFAULT_USER}`) or set STDIO_USER"
    )


def an_ordinary_console_without_bubblewrap(monkeypatch, settings):
    monkeypatch.setattr(isolation, "console_is_root", lambda: False)
    monkeypatch.setattr(isolation, "why_no_sandbox", lambda user, inside=False: "bubblewrap is not installed")
    return (
        "STDIO_ISOLATION=auto: a stdio server would see all of the console's files: bubblewrap is not installed, "
        "and STDIO_USER is not set; set STDIO_ISOLATION=none to run stdio servers as the console's own user anyway"
    )


def a_forced_user_that_does_not_exist(monkeypatch, settings):
    monkeypatch.setattr(isolation, "console_is_root", lambda: False)
    settings.STDIO_ISOLATION, settings.STDIO_USER = "user", "no-such-stdio-user"
    return (
        "STDIO_ISOLATION=user: there is no user 'no-such-stdio-user' (STDIO_USER): "
        "create it, e.g. `useradd --system no-such-stdio-user`"
    )


@pytest.mark.parametrize(
    "machine",
    [a_root_console_without_mcp_stdio, an_ordinary_console_without_bubblewrap, a_forced_user_that_does_not_exist],
)
def test_it_refuses_to_add_a_stdio_server_that_could_not_start_isolated(machine, db, settings, monkeypatch):
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", ""
    why = machine(monkeypatch, settings)
    with pytest.raises(CommandError) as caught:
        call_command("add_server", "Prying", f"--command={shlex.join([sys.executable, str(PRYING)])}")
    assert str(caught.value) == f"stdio servers cannot start here: {why}"
    assert not Server.objects.exists()
    assert probe.describe(stdio_isolation()) == f"cannot start: {why}"


@pytest.mark.django_db(transaction=True)
def test_it_keeps_everything_from_a_stdio_server_a_root_console_runs_through_mcp(settings, stdio_user, login):
    """The high finding: a root console, STDIO_USER unset, and a server added with add_server --command."""
    if os.geteuid() != 0:
        pytest.skip("the tests run unprivileged: the console cannot run as root here")
    require_sandbox(stdio_user)
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", ""
    python, env = python_for(stdio_user)
    server = add_prying_server(python, env)

    report = pry_through_mcp()

    assert_all_refused(report, account(stdio_user).pw_uid)
    line = isolation_line(login("admin").get(reverse("server", args=[server.slug])).content.decode())
    assert line.startswith(
        f"bubblewrap, user {stdio_user}; checked: uid {account(stdio_user).pw_uid}, no capabilities; "
    )
    assert "opens none of " in line


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_it_keeps_everything_from_a_stdio_server_an_ordinary_user_s_console_runs_through_mcp(stdio_user, request):
    """The medium finding: the console of an ordinary user, started by a dumpable shell that holds its keys.

    The console's user here is STDIO_USER's, the one unprivileged user the tests may count on; with
    STDIO_USER unset, as an ordinary user's console has it, the server runs as that user too, sandboxed.
    """
    require_sandbox(stdio_user)
    entry = account(stdio_user)
    # Not pytest's tmp_path, which is under a folder of root's alone.
    tmp_path = Path(tempfile.mkdtemp(prefix="ordinary-console-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp_path, ignore_errors=True))
    reach = python_within_reach(stdio_user, tmp_path)
    var = tmp_path / "var"
    var.mkdir()
    # Its database is this test's, already migrated, copied in.
    with (
        sqlite3.connect(django_settings.DATABASES["default"]["NAME"]) as source,
        sqlite3.connect(var / "console.sqlite3") as copy,
    ):
        source.backup(copy)
    for path in (tmp_path, var, var / "console.sqlite3"):
        os.chown(path, entry.pw_uid, entry.pw_gid)
    keys = {"SECRET_KEY": "make's own secret key", "CREDENTIALS_KEY": "make's own credentials key"}
    console_env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO),
        "CONSOLE_VAR_DIR": str(var),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "STDIO_ISOLATION": "auto",
        **keys,
    }
    # `; exit` keeps the shell, as make stays, the console's dumpable parent; the console keeps its keys in var/.
    console = ["env", *(f"--unset={name}" for name in keys), sys.executable, str(ORDINARY_CONSOLE), sys.executable]
    script = f"umask 022; {shlex.join(console)}; exit $?"
    setpriv = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    argv = [*reach, *setpriv, "sh", "-c", script]
    with subprocess.Popen(argv, env=console_env, cwd=REPO, stdout=PIPE, stderr=PIPE) as shell:
        out, err = shell.communicate(timeout=120)

    assert shell.returncode == 0, err.decode()[-3000:]
    outcome = json.loads(out.decode().splitlines()[-1])
    report = outcome["report"]
    assert report.pop("uid") == str(entry.pw_uid) and report.pop("capabilities") == "none"
    secrets = [var, *(var / key for key in KEYS), var / "demo-passwords.json", var / "console.sqlite3"]
    tried = [f"/proc/{pid}/{name}" for pid in (outcome["pid"], shell.pid, os.getpid()) for name in ("environ", "mem")]
    assert set(report) >= {*tried, *map(str, secrets)}, report
    assert all(value.startswith("refused: ") for value in report.values()), report
    assert outcome["isolation"].startswith(f"bubblewrap; checked: uid {entry.pw_uid}, no capabilities; opens none of ")
    modes = {path.name: path.stat().st_mode & 0o777 for path in var.iterdir() if path.is_file()}
    assert {"console.sqlite3", "demo-passwords.json", "audit_key", "audit_signing_key"} <= set(modes), modes
    assert set(modes.values()) == {0o600} and var.stat().st_mode & 0o777 == 0o700, modes
