"""A root console with the settings it ships with (STDIO_ISOLATION=auto, STDIO_USER unset): the demo server, run by
this virtualenv's Python wherever that lives (pyenv under /root, closed to the stdio user), starts as `make run`'s
seed starts it, as mcp-stdio with no capability; and without a sandbox run as root, a program out of the stdio
user's reach is refused with the path and the fix."""

import contextlib
import os
import shlex
import shutil
import tempfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from approvals import demo
from approvals.catalog.models import Server
from approvals.catalog.specs import upstream_spec
from approvals.management.commands.seed_demo import DEMO_SERVER
from approvals.upstream import SessionPool, isolation
from approvals.upstream.isolation import account
from tests.upstream.machine import require_sandbox
from tests.upstream.prying import isolation_line

CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


@pytest.fixture
def root_console(settings, stdio_user):
    if not isolation.console_is_root():
        pytest.skip("the tests run unprivileged: the console cannot run as root here")
    settings.STDIO_ISOLATION, settings.STDIO_USER = "auto", ""  # as shipped
    return account(stdio_user)


def status(pid: str) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def descends_from_this_process(pid: str) -> bool:
    # Other test workers, and earlier tests' session pools, run the demo server too: only this test's own counts.
    while pid not in ("0", "1"):
        if pid == str(os.getpid()):
            return True
        pid = status(pid)["PPid"]
    return False


def demo_processes() -> list[dict[str, str]]:
    """/proc/<pid>/status of each process this test started that runs the demo server (bwrap's and setpriv's become
    it by exec)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            words = (entry / "cmdline").read_bytes().split(b"\0")
            ours = entry.name.isdigit() and words[:3] == [os.fsencode(word) for word in demo.COMMAND]
            if ours and descends_from_this_process(entry.name):
                found.append(status(entry.name))
    return found


def test_it_starts_the_demo_server_as_make_run_s_seed_does_on_a_root_console(root_console, login):
    require_sandbox()
    out = StringIO()
    call_command("seed_demo", stdout=out)

    server = Server.objects.get(name=DEMO_SERVER)
    assert "lookup_customer" in set(server.tools.values_list("upstream_name", flat=True)), out.getvalue()
    page = login("admin", username="page-reader").get(reverse("server", args=[server.slug]))
    line = isolation_line(page.content.decode())
    assert line.startswith(f"bubblewrap, user {root_console.pw_name}; checked: uid {root_console.pw_uid}, ")
    assert f"uid {root_console.pw_uid}, no capabilities; opens none of " in line


async def test_it_runs_the_demo_server_itself_as_the_stdio_user_holding_no_capability(root_console):
    require_sandbox()
    earlier = {process["Pid"] for process in demo_processes()}
    pool = SessionPool()
    try:
        session = await pool.get(upstream_spec(Server(name="demo", transport="stdio", command=demo.COMMAND_LINE)))
        tools = {tool["name"] for tool in await session.list_tools()}
        running = [process for process in demo_processes() if process["Pid"] not in earlier]
    finally:
        await pool.close_all()
    assert "lookup_customer" in tools
    assert len(running) == 1, running
    assert running[0]["Uid"].split() == [str(root_console.pw_uid)] * 4
    assert running[0]["Gid"].split() == [str(root_console.pw_gid)] * 4
    assert running[0]["Groups"].split() == []
    assert {name: int(running[0][name], 16) for name in CAPABILITY_SETS} == dict.fromkeys(CAPABILITY_SETS, 0)
    assert running[0]["NoNewPrivs"] == "1"


def test_it_refuses_a_program_the_stdio_user_cannot_reach_when_no_sandbox_runs_as_root(
    root_console, monkeypatch, request, login
):
    monkeypatch.setattr(isolation, "why_no_sandbox", lambda user, inside=False: "bubblewrap is not installed")
    # Not pytest's tmp_path, which is under a folder of root's alone.
    closed = Path(tempfile.mkdtemp(prefix="closed-"))
    request.addfinalizer(lambda: shutil.rmtree(closed, ignore_errors=True))
    program = closed / "server"
    shutil.copy("/bin/true", program)
    expected = (
        f"'mcp-stdio', whom stdio servers run as, cannot reach {program} ({closed} is closed to it): "
        "install bubblewrap (`apt-get install bubblewrap`), in which a root console shows a server's program to "
        "'mcp-stdio', set STDIO_USER to a user who can reach it, or put the program (for Python, the one its "
        "virtualenv was made from) where 'mcp-stdio' can read it"
    )
    with pytest.raises(CommandError) as caught:
        call_command("add_server", "Closed", f"--command={shlex.join([str(program)])}")
    assert str(caught.value) == f"this stdio server cannot start here: {expected}"

    server = Server.objects.create(name="Closed", slug="closed", transport="stdio", command=str(program))
    client = login("admin")
    line = isolation_line(client.get(reverse("server", args=[server.slug])).content.decode())
    assert line == f"cannot start: {expected}"
    closed.chmod(0o755)
    line = isolation_line(client.get(reverse("server", args=[server.slug])).content.decode())
    assert line.startswith(f"user mcp-stdio; checked: uid {root_console.pw_uid}, no capabilities; opens none of ")
