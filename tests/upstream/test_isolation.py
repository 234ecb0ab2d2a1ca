"""Stdio servers kept from the console's environment, memory and files, in each isolation mode the machine allows.

The prying server (tests/servers/prying_server.py) is started as the console starts any
stdio server: from a server row through upstream_spec and the session pool, with the
settings of each mode (the compose recipe's: auto with STDIO_USER); and as a client reaches
it, added with add_server and called through /mcp, by a console run as root (this process,
when the tests run as root) and by one run as an ordinary user (ordinary_console.py). This
test process is the console: Django made it non-dumpable at start-up, and its pid and its
ancestors' are what the server pries at.
"""

import contextlib
import ctypes
import dataclasses
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from subprocess import PIPE

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.urls import reverse

from approvals.catalog.models import Server
from approvals.catalog.specs import stdio_isolation, upstream_spec
from approvals.demo import COMMAND as DEMO
from approvals.upstream import SessionPool, UpstreamError, isolation, probe, sandbox
from approvals.upstream.isolation import DEFAULT_USER, account, can_switch_users, why_no_sandbox
from tests.fixtures.servers import REPO
from tests.fixtures.waiting import eventually
from tests.upstream.prying import (
    KEYS,
    PRYING,
    add_prying_server,
    ancestors,
    console_secrets,
    isolation_line,
    pry_through_mcp,
)

STDIO_USER = DEFAULT_USER  # as the Dockerfile names it
SAME_USER_CONSOLE = Path(__file__).with_name("same_user_console.py")
ORDINARY_CONSOLE = Path(__file__).with_name("ordinary_console.py")


@pytest.fixture(scope="module")
def stdio_user() -> str:
    """STDIO_USER, created when this machine lets the tests do so (root)."""
    if not can_switch_users():
        pytest.skip("the tests run unprivileged, so the console cannot start a process as another user")
    if account(STDIO_USER) is None:
        if os.geteuid() != 0:
            pytest.skip(f"there is no user {STDIO_USER!r}, and only root may create it")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin"]
            + [STDIO_USER],
            check=True,
        )
    return STDIO_USER


def require_sandbox(user: str = ""):
    why = why_no_sandbox(user)
    if why:
        pytest.skip(why)


def runs_as(user: str, argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, user=user, capture_output=True, timeout=30).returncode == 0
    except PermissionError:
        return False


def python_for(user: str) -> tuple[str, dict[str, str]]:
    """A Python that `user` may run, with this virtualenv's packages.

    Ours, unless it lives where that user cannot go (pyenv under root's home): then the
    system's Python of the same version, given our packages on PYTHONPATH.
    """
    if not user or runs_as(user, [sys.executable, "-c", ""]):
        return sys.executable, {}
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if os.path.exists(system) and runs_as(user, [system, "-c", ""]):
        return system, {"PYTHONPATH": sysconfig.get_paths()["purelib"]}
    pytest.skip(f"{sys.executable} is out of {user}'s reach and there is no {system} to run instead")


def python_within_reach(user: str, scratch: Path) -> list[str]:
    """The command prefix under which `user` runs this Python, with its own packages (the system's Python may
    be another release, which they do not fit): none, or where it lives under root's home (pyenv), a private
    mount namespace in which that home shows only the folder holding it."""
    if runs_as(user, [sys.executable, "-c", ""]):
        return []
    real = Path(os.path.realpath(sys.executable))
    if not real.is_relative_to("/root"):
        pytest.skip(f"{sys.executable} is out of {user}'s reach")
    top, hold = Path("/root", real.relative_to("/root").parts[0]), scratch / "python"
    show = (
        f"mkdir {hold} && mount --bind {top} {hold} && mount -t tmpfs -o mode=0755 tmpfs /root"
        f' && mkdir {top} && mount --move {hold} {top} && exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", show, "sh"]


async def pry(spec) -> dict[str, str]:
    paths = await sync_to_async(console_secrets)()
    pool = SessionPool()
    try:
        session = await pool.get(spec)
        result = await session.call_tool("pry", {"pid": os.getpid(), "ancestors": ancestors(), "paths": paths})
    finally:
        await pool.close_all()
    return result["structuredContent"]


def child_user(request, switching: bool) -> str:
    """Whom a stdio server runs as: STDIO_USER when the test switches, and the default a root console takes."""
    return request.getfixturevalue("stdio_user") if switching or os.geteuid() == 0 else ""


def assert_all_refused(report: dict[str, str], uid: int):
    assert report.pop("uid") == str(uid)
    assert report.pop("capabilities") == "none"
    assert len(report) == 2 * (1 + len(ancestors())) + len(console_secrets()), report
    assert all(outcome.startswith("refused: ") for outcome in report.values()), report


def prying_processes() -> list[str]:
    """The processes, sandbox included, still running this worktree's prying server."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and str(PRYING).encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
    return found


def stdio_row(command: list[str], env: dict[str, str]) -> Server:
    return Server(name="prying", transport=Server.Transport.STDIO, command=shlex.join(command), env=env)


@pytest.mark.parametrize(
    "mode, switching",
    [("user", True), ("bubblewrap", False), ("bubblewrap", True), ("auto", True)],
    ids=["user", "bubblewrap", "bubblewrap-and-user", "compose-recipe-auto-with-stdio-user"],
)
async def test_it_keeps_the_console_s_environment_memory_and_files_from_a_stdio_server(
    mode, switching, settings, django_db_setup, request
):
    user = child_user(request, switching)
    if mode != "user":
        require_sandbox(user)
    settings.STDIO_ISOLATION, settings.STDIO_USER = mode, user if switching else ""
    python, env = python_for(user)

    report = await pry(upstream_spec(stdio_row([python, str(PRYING)], env)))

    # Closing the session ends all of it, whatever runs the server: bwrap, the user switched to, the server.
    await eventually(lambda: not prying_processes(), timeout=5, message="the prying server and its sandbox gone")
    await sync_to_async(assert_all_refused)(report, account(user).pw_uid if user else os.getuid())


@pytest.mark.parametrize("dumpable", [False, True], ids=["console-not-dumpable", "control-dumpable"])
def test_it_closes_proc_environ_and_mem_to_a_server_of_the_console_s_own_user(dumpable, request):
    """STDIO_ISOLATION=none: only the console's being non-dumpable stands between it and the server.

    A console that is not root, as the prying server runs as the same user, is started for this
    (as STDIO_USER when the tests run as root); the control shows that the server would read a
    dumpable one's environment.
    """
    user = request.getfixturevalue("stdio_user") if os.geteuid() == 0 else ""
    python, env = python_for(user)
    done = subprocess.run(
        [python, str(SAME_USER_CONSOLE), python, str(PRYING), *(["--dumpable"] if dumpable else [])],
        user=user or None,
        env={"PYTHONPATH": os.pathsep.join([str(REPO), *env.values()]), "PATH": os.environ["PATH"]},
        cwd="/",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert set(report["outcomes"]) == {f"/proc/{report['pid']}/environ", f"/proc/{report['pid']}/mem"}
    if dumpable:
        assert report["outcomes"][f"/proc/{report['pid']}/environ"].startswith("read ")
    else:
        assert all(outcome.startswith("refused: ") for outcome in report["outcomes"].values()), report


@pytest.mark.parametrize("switching", [False, True], ids=["bubblewrap", "bubblewrap-and-user"])
async def test_it_still_runs_real_servers_isolated(switching, settings, request, everything_stdio_spec, sdk_stdio_spec):
    user = child_user(request, switching)
    require_sandbox(user)
    python, env = python_for(user)
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", user if switching else ""
    specs = [
        dataclasses.replace(everything_stdio_spec, isolation=stdio_isolation()),
        dataclasses.replace(
            sdk_stdio_spec, command=(python, *sdk_stdio_spec.command[1:]), env=env, isolation=stdio_isolation()
        ),
        upstream_spec(Server(name="demo", transport="stdio", command=shlex.join([python, *DEMO[1:]]), env=env)),
    ]
    pool = SessionPool()
    try:
        sessions = [await pool.get(spec) for spec in specs]
        everything, sdk, demo = [{tool["name"] for tool in await session.list_tools()} for session in sessions]
        echoed = [await session.call_tool("echo", {"message": "hi"}) for session in sessions[:2]]
    finally:
        await pool.close_all()
    assert "echo" in everything and "echo" in sdk and "lookup_customer" in demo
    assert [result["content"][0]["text"] for result in echoed] == ["Echo: hi", "hi"]


async def test_it_refuses_to_start_a_server_under_a_forced_isolation_it_cannot_give(settings):
    settings.STDIO_ISOLATION, settings.STDIO_USER = "user", "no-such-stdio-user"
    with pytest.raises(UpstreamError) as caught:
        await pry(upstream_spec(stdio_row([sys.executable, str(PRYING)], {})))
    why = "the console runs as root, and a stdio server never does" if os.geteuid() == 0 else "STDIO_ISOLATION=user"
    assert caught.value.message == (
        f"prying: {why}: there is no user 'no-such-stdio-user' (STDIO_USER): "
        "create it, e.g. `useradd --system no-such-stdio-user`"
    )


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
    monkeypatch.setattr(isolation, "why_no_sandbox", lambda user: "bubblewrap is not installed")
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


def test_it_says_on_the_server_page_what_a_stdio_server_runs_under_as_a_probe_found_it(login, settings):
    server = Server.objects.create(name="Local", slug="local", transport="stdio", command="true")
    client = login("admin")
    settings.STDIO_ISOLATION = "none"
    line = isolation_line(client.get(reverse("server", args=[server.slug])).content.decode())
    # Unisolated, the server opens var/ and the database, and root's every other process and capability too.
    assert f"checked: uid {os.geteuid()}, " in line
    assert f"OPENS {django_settings.VAR_DIR}, " in line
    if os.geteuid() == 0:
        assert line.startswith("none: same user, as root; checked: uid 0, capabilities ")
        assert f"/proc/{os.getppid()}/environ" in line
    else:
        assert line.startswith("none: same user, console not dumpable; ")
    settings.STDIO_ISOLATION, settings.STDIO_USER = "user", "no-such-stdio-user"
    page = client.get(reverse("server", args=[server.slug])).content.decode()
    assert "there is no user &#x27;no-such-stdio-user&#x27;" in page and "cannot start: " in page


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


def test_it_made_this_console_process_not_dumpable_when_django_started():
    pr_get_dumpable = 3
    assert ctypes.CDLL(None).prctl(pr_get_dumpable, 0, 0, 0, 0) == 0


def test_it_binds_no_part_of_proc_sys_or_dev_that_a_command_names_into_a_sandbox():
    """/proc/<pid> of an ancestor, bound into the sandbox, would show it again, whatever its own /proc hides."""
    parent = f"/proc/{os.getppid()}"
    command = [sys.executable, str(PRYING), parent, f"{parent}/environ", "/sys/kernel", "/dev/shm"]
    argv = sandbox.argv(command, str(REPO), {"EXTRA": f"{parent}/root"}, (), str(REPO))
    bound = [argv[i + 1] for i, word in enumerate(argv) if word in ("--ro-bind", "--bind")]
    assert str(PRYING.parent) in bound
    assert not [path for path in bound if path.startswith(("/proc", "/sys", "/dev"))], bound
