"""Stdio servers kept from the console's environment, memory and files, in each isolation mode the machine allows.

The prying server (tests/servers/prying_server.py) is started as the console starts any
stdio server: from a server row through upstream_spec and the session pool, with the
settings of each mode (the compose recipe's: auto with STDIO_USER); test_isolation_through_mcp.py
reaches it as a client does. This test process is the console: Django made it non-dumpable
at start-up, and its pid and its ancestors' are what the server pries at.
"""

import contextlib
import ctypes
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.urls import reverse

from approvals.catalog.models import Server
from approvals.catalog.specs import stdio_isolation, upstream_spec
from approvals.demo import COMMAND as DEMO
from approvals.upstream import SessionPool, UpstreamError, isolation, sandbox
from approvals.upstream.isolation import account
from tests.fixtures.servers import REPO
from tests.fixtures.waiting import eventually
from tests.upstream.machine import python_for, require_sandbox
from tests.upstream.prying import PRYING, ancestors, assert_all_refused, console_secrets, isolation_line

SAME_USER_CONSOLE = Path(__file__).with_name("same_user_console.py")


def child_user(request, switching: bool) -> str:
    """Whom a stdio server runs as: STDIO_USER when the test switches, and the default a root console takes."""
    return request.getfixturevalue("stdio_user") if switching or os.geteuid() == 0 else ""


async def pry(spec) -> dict[str, str]:
    paths = await sync_to_async(console_secrets)()
    pool = SessionPool()
    try:
        session = await pool.get(spec)
        result = await session.call_tool("pry", {"pid": os.getpid(), "ancestors": ancestors(), "paths": paths})
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


def test_it_shows_a_sandboxed_server_a_tmp_of_its_own_not_the_machine_s(settings, request):
    """HOME=/tmp, which an isolated server is given, and a TMPDIR=/tmp of its own settings name /tmp: bound, the
    machine's /tmp, with what other processes leave there, would hide the sandbox's."""
    require_sandbox(child_user(request, switching=False))
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", ""
    handle, left = tempfile.mkstemp(prefix="left-by-another-process-")
    os.close(handle)
    os.chmod(left, 0o644)
    request.addfinalizer(lambda: os.unlink(left))
    wanted = stdio_isolation()
    launch = isolation.prepare(["/bin/ls", "-a", "/tmp"], wanted.console_dir, {"TMPDIR": "/tmp"}, {}, wanted)
    done = subprocess.run(launch.argv, env=launch.env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [".", ".."]
