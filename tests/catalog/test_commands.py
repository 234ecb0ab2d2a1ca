import json
import shlex
import sys
from io import StringIO
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urljoin

import pytest
from django.core.management import CommandError, call_command

from approvals.catalog.models import Server
from approvals.management.commands import seed_demo
from approvals.management.commands.seed_demo import DEMO_SERVER

SCRIPTED = Path(__file__).with_name("scripted_server.py")


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def scripted_command(tmp_path):
    path = tmp_path / "scenario.json"
    tools = [{"name": n, "title": n.title(), "inputSchema": {"type": "object"}} for n in ("alpha", "beta")]
    path.write_text(json.dumps({"pages": [tools]}))
    return shlex.join([sys.executable, str(SCRIPTED), str(path)])


def test_it_adds_a_server_syncs_it_and_lists_its_tools(db, scripted_command):
    out = run(
        "add_server",
        "Scripted",
        "--command",
        scripted_command,
        "--trusted",
        "--header",
        "X-Team: blue",
        "--accept-tools",
    )
    assert "2 added" in out
    server = Server.objects.get(name="Scripted")
    assert server.trusted and server.tool_prefix == "scripted_"
    assert server.headers == {"X-Team": "blue"}
    listing = json.loads(run("list_tools", "--server", "Scripted", "--json"))
    assert [t["exposed_name"] for t in listing] == ["scripted_alpha", "scripted_beta"]
    assert listing[0]["definition"]["title"] == "Alpha"


def test_it_takes_an_empty_prefix(db, scripted_command):
    run("add_server", "Bare", "--command", scripted_command, "--prefix", "")
    assert "\talpha\t" in run("list_tools")


def test_it_refuses_a_malformed_header(db, scripted_command):
    with pytest.raises(CommandError, match="not 'Name: value'"):
        run("add_server", "Bad", "--command", scripted_command, "--header", "no colon here")
    assert not Server.objects.filter(name="Bad").exists()


def test_it_refuses_a_second_server_of_the_same_name(db, scripted_command):
    run("add_server", "Twice", "--command", scripted_command, "--no-sync")
    with pytest.raises(CommandError, match="exists already"):
        run("add_server", "Twice", "--command", scripted_command)


def test_it_fails_the_sync_of_an_unknown_server_by_name(db):
    with pytest.raises(CommandError, match="no server named 'Ghost'"):
        run("sync_servers", "Ghost")


def test_it_exits_non_zero_when_a_sync_fails(db):
    run("add_server", "Dead", "--url", "http://127.0.0.1:9/mcp", "--no-sync")
    with pytest.raises(CommandError, match="1 of 1 servers failed"):
        run("sync_servers")


def test_it_refuses_the_same_header_twice_in_another_case(db, scripted_command):
    with pytest.raises(CommandError, match="given twice"):
        run("add_server", "Twice", "--command", scripted_command, "--header", "X-Team: a", "--header", "x-team: b")


def test_it_leaves_a_new_servers_tools_needing_review_unless_they_are_accepted(db, scripted_command):
    assert "2 awaiting review" in run("add_server", "Fresh", "--command", scripted_command)
    assert "awaiting review" not in run("add_server", "Trusted", "--command", scripted_command, "--accept-tools")

    statuses = dict(Server.objects.values_list("name", "tools__status").distinct())
    assert statuses == {"Fresh": "needs_review", "Trusted": "active"}


def test_it_seeds_the_demo_with_its_own_tools_accepted(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path

    run("seed_demo")

    demo = Server.objects.get(name=DEMO_SERVER)
    assert demo.tools.filter(status="active").count() >= 5
    assert not demo.tools.exclude(status="active").exists()


def test_it_points_the_demo_agent_at_the_port_the_console_serves_on(db, settings, tmp_path, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("PORT", "8123")
    synced = SimpleNamespace(summary=lambda: "synced")
    monkeypatch.setattr("approvals.management.commands.seed_demo.sync.sync_server", lambda server: synced)

    printed = run("seed_demo")
    monkeypatch.delenv("PORT")

    assert "The console: http://127.0.0.1:8123/" in printed
    assert urljoin(seed_demo.remembered_url(), "mcp") == "http://127.0.0.1:8123/mcp"
