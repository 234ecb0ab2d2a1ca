"""Stdio servers kept from the console's environment, memory and files, in each isolation mode the machine allows.

The prying server (tests/servers/prying_server.py) is started as the console starts any
stdio server: from a server row through upstream_spec and the session pool, with the
settings of each mode (the compose recipe's: auto with STDIO_USER). This test process is
the console: Django made it non-dumpable at start-up, and its pid is what the server pries at.
"""

import contextlib
import ctypes
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from approvals.catalog.models import Server
from approvals.catalog.specs import stdio_isolation, upstream_spec
from approvals.demo import COMMAND as DEMO
from approvals.upstream import SessionPool, UpstreamError
from approvals.upstream.isolation import account, can_switch_users, why_no_sandbox
from tests.fixtures.servers import REPO, SERVERS
from tests.fixtures.waiting import eventually

STDIO_USER = "mcp-stdio"  # as the Dockerfile names it
PRYING = SERVERS / "prying_server.py"
SAME_USER_CONSOLE = Path(__file__).with_name("same_user_console.py")


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


def console_secrets() -> list[str]:
    """The console's keys and its SQLite database (the services pass has none), which must all exist here."""
    paths = [django_settings.VAR_DIR / "audit_key", django_settings.VAR_DIR / "secret_key"]
    database = django_settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        paths.append(Path(database["NAME"]))
    assert all(path.exists() for path in paths), paths
    return [str(path) for path in paths]


async def pry(spec) -> dict[str, str]:
    pool = SessionPool()
    try:
        session = await pool.get(spec)
        result = await session.call_tool("pry", {"pid": os.getpid(), "paths": console_secrets()})
    finally:
        await pool.close_all()
    return result["structuredContent"]


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
    user = request.getfixturevalue("stdio_user") if switching else ""
    if mode != "user":
        require_sandbox(user)
    settings.STDIO_ISOLATION, settings.STDIO_USER = mode, user
    python, env = python_for(user)

    report = await pry(upstream_spec(stdio_row([python, str(PRYING)], env)))

    # Closing the session ends all of it, whatever runs the server: bwrap, the user switched to, the server.
    await eventually(lambda: not prying_processes(), timeout=5, message="the prying server and its sandbox gone")
    uid = report.pop("uid")
    assert uid == (str(account(user).pw_uid) if user else str(os.getuid()))
    assert len(report) == 2 + len(console_secrets())
    assert all(outcome.startswith("refused: ") for outcome in report.values()), report


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
    user = request.getfixturevalue("stdio_user") if switching else ""
    require_sandbox(user)
    python, env = python_for(user)
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", user
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
    assert caught.value.message == (
        "prying: STDIO_ISOLATION=user: there is no user 'no-such-stdio-user' (STDIO_USER): "
        "create it, e.g. `useradd --system no-such-stdio-user`"
    )


def test_it_says_on_the_server_page_what_a_stdio_server_runs_under(login, settings):
    server = Server.objects.create(name="Local", slug="local", transport="stdio", command="true")
    client = login("admin")
    settings.STDIO_ISOLATION = "none"
    assert "none: same user, console not dumpable" in client.get(reverse("server", args=[server.slug])).content.decode()
    settings.STDIO_ISOLATION, settings.STDIO_USER = "user", "no-such-stdio-user"
    page = client.get(reverse("server", args=[server.slug])).content.decode()
    assert "cannot start: STDIO_ISOLATION=user: there is no user" in page


def test_it_made_this_console_process_not_dumpable_when_django_started():
    pr_get_dumpable = 3
    assert ctypes.CDLL(None).prctl(pr_get_dumpable, 0, 0, 0, 0) == 0
