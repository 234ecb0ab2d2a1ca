"""Disabling, changing or deleting a server closes its upstream sessions everywhere and cancels its waiting calls."""

import asyncio
import json
import shlex
from dataclasses import replace

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from approvals import roles
from approvals.actions import servers
from approvals.audit.chain import Actor
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, runner, upstream_sessions
from approvals.calls.models import Call
from approvals.catalog.models import Server
from approvals.catalog.specs import upstream_spec
from approvals.live import events
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.catalog import make_tool
from tests.fixtures.people import make_user
from tests.fixtures.processes import gone
from tests.fixtures.servers import scenario_spec
from tests.fixtures.sockets import open_socket, signed_in
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def family(transactional_db, settings):
    """A stdio server whose child process can say its pid, with that tool."""
    # A pid said from inside a sandbox's PID namespace names no process out here, where the tests watch it.
    settings.STDIO_ISOLATION = "none"
    server = Server.objects.create(
        name="family", slug="family", transport="stdio", command=shlex.join(scenario_spec("family").command)
    )
    make_tool(server, "pids")
    return server


async def running_child(server) -> tuple[object, int]:
    """The session this event loop's pool holds to `server`, and the pid of its child process."""
    session = await upstream_sessions.session_pool().get(await sync_to_async(upstream_spec)(server))
    pids = json.loads((await session.call_tool("pids", {}))["content"][0]["text"])
    return session, pids["child"]


async def held_call(token, server):
    """A client's call to the server's tool, held for an operator's decision."""

    async def emit(message):
        pass

    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    params = {"name": f"{server.tool_prefix}pids", "arguments": {}}
    answering = asyncio.create_task(runner.run_call(ctx, 1, params, emit))
    return answering, await wait_for_pending_call()


async def test_it_cancels_the_waiting_call_and_stops_the_child_when_the_server_is_disabled(
    family, client_token, person
):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie)
    assert connected
    session, child = await running_child(family)
    answering, call = await held_call(client_token, family)
    assert (await socket.receive_json_from(timeout=5))["event"] == "call.pending"

    admin = await sync_to_async(make_user)("root", roles.ADMIN)
    await sync_to_async(servers.update_server)(family, Actor.user(admin), enabled=False)

    answer = await asyncio.wait_for(answering, 10)
    assert (
        answer["isError"] and "cancelled: its server was disabled before the call ran" in answer["content"][0]["text"]
    )
    pushed = await socket.receive_json_from(timeout=5)
    assert (pushed["event"], pushed["call_id"], pushed["status"]) == ("call.cancelled", call.pk, "cancelled")
    assert "html" not in pushed and pushed["outcome"].startswith("Cancelled")
    cancelled = await AuditEvent.objects.aget(call_id=call.pk, action="call.cancelled")
    assert cancelled.actor_name == "root" and "disabled" in cancelled.data["reason"]
    late = await sync_to_async(deciding.decide)(call.pk, admin, True)
    assert not late.won and (await Call.objects.aget(pk=call.pk)).status == Call.Status.CANCELLED
    await eventually(lambda: gone(child), timeout=5, message="the server's stdio child gone")
    assert not session.alive
    await socket.disconnect()


async def test_it_cancels_and_reconnects_when_the_server_s_command_changes(family, client_token):
    session, child = await running_child(family)
    answering, call = await held_call(client_token, family)
    command = shlex.join(scenario_spec("family").command + ("--changed",))
    await sync_to_async(servers.update_server)(family, command=command)
    assert "its server's endpoint changed" in (await asyncio.wait_for(answering, 10))["content"][0]["text"]
    await eventually(lambda: gone(child), timeout=5, message="the old child gone")
    assert not session.alive


async def test_it_leaves_calls_and_sessions_alone_for_a_change_of_trust(family, client_token):
    session, _ = await running_child(family)
    answering, call = await held_call(client_token, family)
    await sync_to_async(servers.update_server)(family, trusted=True)
    await asyncio.sleep(0)
    assert (await Call.objects.aget(pk=call.pk)).status == Call.Status.PENDING and session.alive
    answering.cancel()
    await asyncio.gather(answering, return_exceptions=True)


async def test_it_cancels_and_stops_the_child_when_an_admin_deletes_the_server_in_django_admin(family, client_token):
    _, child = await running_child(family)
    answering, call = await held_call(client_token, family)

    def delete_in_admin():
        browser = Client()
        browser.force_login(make_user("root", superuser=True))
        response = browser.post(f"/admin/approvals/server/{family.pk}/delete/", {"post": "yes"})
        assert response.status_code == 302, response.content.decode()[:500]

    await sync_to_async(delete_in_admin)()
    assert "its server was deleted" in (await asyncio.wait_for(answering, 10))["content"][0]["text"]
    assert not await Server.objects.filter(pk=family.pk).aexists()
    assert (await Call.objects.aget(pk=call.pk)).status == Call.Status.CANCELLED
    await eventually(lambda: gone(child), timeout=5, message="the deleted server's child gone")


async def test_it_stops_the_child_of_a_server_disabled_unannounced_on_the_housekeeping_schedule(family, settings):
    settings.STALE_CALLS_INTERVAL_SECONDS = 0.2
    _, child = await running_child(family)

    # Behind the console's back: no process hears of it but through the sweep.
    await Server.objects.filter(pk=family.pk).aupdate(enabled=False)

    await eventually(lambda: gone(child), message="the disabled server's child stopped")


async def test_it_keeps_the_session_of_a_server_unchanged_across_sweeps(family, settings):
    settings.STALE_CALLS_INTERVAL_SECONDS = 0.1
    session, child = await running_child(family)

    await asyncio.sleep(0.5)

    assert session.alive and not gone(child)
    assert await upstream_sessions.session_pool().get(await sync_to_async(upstream_spec)(family)) is session


async def test_it_keeps_a_session_asked_for_again_while_the_sweep_read_the_servers(family, monkeypatch):
    session, child = await running_child(family)
    pool, loop = upstream_sessions.session_pool(), asyncio.get_running_loop()
    spec = await sync_to_async(upstream_spec)(family)

    def read_as_the_server_comes_back(names):
        # The sweep finds the server gone, as it is between two tests that each make it or when an admin deletes
        # it and adds it again as it was; a call made after that asks the pool for it before the sweep goes on.
        asyncio.run_coroutine_threadsafe(pool.get(spec), loop).result(10)
        return {}

    monkeypatch.setattr(upstream_sessions, "current_specs", read_as_the_server_comes_back)
    await upstream_sessions.close_sessions_of_retired_servers(pool)

    assert session.alive and not gone(child)


async def test_it_keeps_a_persons_session_to_a_server_unchanged_across_sweeps(family):
    pool = upstream_sessions.session_pool()
    persons = replace(await sync_to_async(upstream_spec)(family), identity="7")
    session = await pool.get(persons)

    await upstream_sessions.close_sessions_of_retired_servers(pool)

    assert session.alive
    assert await pool.get(persons) is session


async def test_it_closes_one_persons_sessions_everywhere_when_their_connection_changes(family):
    pool = upstream_sessions.session_pool()
    shared_spec = await sync_to_async(upstream_spec)(family)
    ann = await pool.get(replace(shared_spec, identity="7"))
    bob = await pool.get(replace(shared_spec, identity="8"))

    await sync_to_async(events.upstream_retired)("family", identity="7")

    await eventually(lambda: not ann.alive, message="the person's session closed")
    assert bob.alive
