"""The operators' websocket, through the whole ASGI application: origin check, sign-in, permissions, pushed rows."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.db.backends.signals import connection_created
from django.test import Client

from approvals import roles
from approvals.calls import deciding, ending
from approvals.catalog import sync
from approvals.catalog.models import Server, Tool
from approvals.db.sessions import SessionStore
from approvals.live import events
from approvals.views.consumers import OperatorConsumer
from tests.fixtures.sockets import cookies_of, open_socket, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_refuses_anonymous_connections():
    socket, connected = await open_socket()
    assert not connected
    await socket.disconnect()


async def test_it_refuses_other_origins(person):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie, origin=b"http://evil.example")
    assert not connected
    await socket.disconnect()


@pytest.mark.parametrize(
    "origin", [b"http://127.0.0.1:9999", b"http://localhost:9999", b"https://127.0.0.1:8000", None]
)
async def test_it_refuses_a_page_on_another_port_or_scheme_of_the_same_host_or_one_naming_no_origin(person, origin):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie, origin=origin)
    assert not connected
    await socket.disconnect()


async def test_it_refuses_a_page_on_a_host_it_does_not_serve_even_with_a_matching_origin(person):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie, origin=b"http://rebound.example:8000", host=b"rebound.example:8000")
    assert not connected
    await socket.disconnect()


async def test_it_refuses_users_without_a_role(person):
    cookie = await signed_in(person, "nobody")
    socket, connected = await open_socket(cookie)
    assert not connected
    await socket.disconnect()


async def test_it_pushes_a_new_call_with_decide_controls_to_an_operator(person, make_call, refund_tool):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie)
    assert connected
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "call.pending" and message["call_id"] == call.pk and message["pending_count"] == 1
    assert f'id="call-{call.pk}"' in message["html"] and "Approve</button>" in message["html"]
    assert 'name="csrfmiddlewaretoken"' in message["html"]
    await socket.disconnect()


async def test_it_closes_the_socket_when_a_push_fails_so_that_the_page_reconnects_and_reads_itself_again(
    person, make_call, refund_tool, monkeypatch
):
    def failing(self, batch):
        raise RuntimeError("the database went away")

    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie)
    assert connected
    monkeypatch.setattr(OperatorConsumer, "call_payloads", failing)
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    assert (await socket.receive_output(timeout=5))["type"] == "websocket.close"
    await socket.wait()


async def test_it_lets_an_auditor_watch_without_decide_controls(person, make_call, refund_tool):
    cookie = await signed_in(person, "aud", roles.AUDITOR)
    socket, connected = await open_socket(cookie)
    assert connected
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "call.pending"
    assert "Approve</button>" not in message["html"] and "call_decide" not in message["html"]
    assert "/decide/" not in message["html"]
    await socket.disconnect()


async def test_it_keeps_its_database_connection_from_one_pushed_event_to_the_next(person, make_call, refund_tool):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    socket, connected = await open_socket(cookie)
    assert connected
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    assert (await socket.receive_json_from(timeout=5))["event"] == "call.pending"
    opened = []
    connection_created.connect(
        lambda **kwargs: opened.append(kwargs["connection"]), weak=False, dispatch_uid="test-opened"
    )
    try:
        # The call is made on the consumers' thread too, so it finds that thread's connection open.
        await sync_to_async(make_call)(refund_tool, {"order_id": 1013, "amount": 45})
        assert (await socket.receive_json_from(timeout=5))["event"] == "call.pending"
    finally:
        connection_created.disconnect(dispatch_uid="test-opened")
    assert opened == []
    await socket.disconnect()


async def closed_code(socket) -> int | None:
    message = await socket.receive_output(timeout=5)
    return message.get("code") if message["type"] == "websocket.close" else None


async def test_it_closes_an_operator_s_socket_when_they_lose_their_role(person):
    ann, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected

    await sync_to_async(ann.groups.clear)()

    assert await closed_code(socket) == 4403
    await socket.disconnect()


async def test_it_closes_the_socket_of_a_session_that_ended_without_a_word_at_its_next_check(person, settings):
    settings.SOCKET_ACCESS_RECHECK_SECONDS = 0.2
    _, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected

    # As when it expires: gone from the store, and no signal says so.
    await sync_to_async(SessionStore(client.cookies["sessionid"].value).delete)()

    assert await closed_code(socket) == 4403
    await socket.disconnect()


async def test_it_keeps_a_socket_whose_session_still_holds_through_its_checks(person, settings, make_call, refund_tool):
    settings.SOCKET_ACCESS_RECHECK_SECONDS = 0.1
    _, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected

    # A real pause, not a wait: the socket must live through several of its access checks.
    await asyncio.sleep(0.5)
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})

    assert (await socket.receive_json_from(timeout=5))["event"] == "call.pending"
    await socket.disconnect()


async def test_it_closes_the_socket_of_a_deactivated_user(person):
    ann, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected
    ann.is_active = False

    await sync_to_async(ann.save)()

    assert await closed_code(socket) == 4403
    await socket.disconnect()


async def test_it_closes_the_sockets_of_a_session_that_signs_out_and_no_other(person, make_call, refund_tool):
    ann, client = await sync_to_async(person)("ann", roles.OPERATOR)
    other_browser = Client()
    await sync_to_async(other_browser.force_login)(ann)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    other_socket, other_connected = await open_socket(await sync_to_async(cookies_of)(other_browser))
    assert connected and other_connected

    await sync_to_async(client.post)("/logout/")

    assert await closed_code(socket) == 4403
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    assert (await other_socket.receive_json_from(timeout=5))["event"] == "call.pending"
    await socket.disconnect()
    await other_socket.disconnect()


async def test_it_closes_the_socket_after_a_password_change_but_leaves_the_session_to_its_own_next_request(person):
    ann, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected

    ann.set_password("another long enough password")
    await sync_to_async(ann.save)()

    assert await closed_code(socket) == 4403
    # Had the password been changed on a page of this session, Django would now update its hash.
    assert await sync_to_async(SessionStore().exists)(client.cookies["sessionid"].value)


async def test_it_ends_the_session_and_closes_the_socket_of_an_operator_made_auditor(person):
    # A page opened with one role goes on with none of it: the person signs in again, as an auditor.
    ann, client = await sync_to_async(person)("ann", roles.OPERATOR)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(client))
    assert connected

    await sync_to_async(ann.groups.set)(await sync_to_async(list)(Group.objects.filter(name=roles.AUDITOR)))

    assert await closed_code(socket) == 4403
    assert not await sync_to_async(SessionStore().exists)(client.cookies["sessionid"].value)
    await socket.disconnect()


async def test_it_pushes_who_decided(person, make_call, refund_tool):
    cookie = await signed_in(person, "bob", roles.OPERATOR)
    ann, _ = await sync_to_async(person)("ann", roles.OPERATOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    socket, _ = await open_socket(cookie)
    await sync_to_async(deciding.decide)(call.pk, ann, True)
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "call.decided" and message["status"] == "approved" and message["pending_count"] == 0
    # The queue drops the call's row and says how it ended; nothing it is sent offers a button.
    assert message["outcome"] == "Approved by ann" and message["tool"] == call.tool_name and "html" not in message
    await socket.disconnect()


async def test_it_pushes_how_a_decided_call_ended(person, make_call, refund_tool):
    cookie = await signed_in(person, "bob", roles.OPERATOR)
    ann, _ = await sync_to_async(person)("ann", roles.OPERATOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    decision = await sync_to_async(deciding.decide)(call.pk, ann, True)
    socket, _ = await open_socket(cookie)
    await sync_to_async(ending.record_result)(decision.row, "completed", {"content": []}, "")
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "call.finished" and message["status"] == "completed" and "pending_count" not in message
    assert message["outcome"] == "Approved by ann · completed"
    await socket.disconnect()


async def test_it_drops_rows_a_filtered_list_no_longer_shows(person, make_call, refund_tool):
    cookie = await signed_in(person, "bob", roles.OPERATOR)
    ann, _ = await sync_to_async(person)("ann", roles.OPERATOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    socket, _ = await open_socket(cookie, query="view=recent&status=pending")
    await sync_to_async(deciding.decide)(call.pk, ann, False, "no")
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "call.decided" and message["html"] == ""
    await socket.disconnect()


async def test_it_pushes_a_server_health_change(person, shop):
    cookie = await signed_in(person, "aud", roles.AUDITOR)
    socket, _ = await open_socket(cookie, query="")
    await sync_to_async(sync.record_failure)(shop, "connection refused")
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "server.status" and message["health"] == Server.Health.ERROR
    assert f'data-server-health="{shop.pk}"' in message["html"] and "Failing" in message["html"]
    await socket.disconnect()


async def test_it_pushes_a_call_page_only_its_own_call(person, make_call, refund_tool):
    cookie = await signed_in(person, "aud", roles.AUDITOR)
    ann, _ = await sync_to_async(person)("ann", roles.OPERATOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    socket, _ = await open_socket(cookie, query=f"view=call&id={call.pk}")
    other = await sync_to_async(make_call)(refund_tool, {"order_id": 7, "amount": 1})
    message = await socket.receive_json_from(timeout=5)
    assert message["call_id"] == other.pk and message["html"] is None
    await sync_to_async(deciding.decide)(call.pk, ann, False, "wrong order")
    message = await socket.receive_json_from(timeout=5)
    assert (
        message["call_id"] == call.pk
        and "Timeline" in message["html"]
        and "Denied by ann: wrong order" in message["html"]
    )
    await socket.disconnect()


async def test_it_warns_on_pending_rows_whose_tool_changed(person, make_call, refund_tool):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    socket, _ = await open_socket(cookie)
    await Tool.objects.filter(pk=refund_tool.pk).aupdate(digest="changed")
    await sync_to_async(events.catalog_changed)(refund_tool.server_id)
    counted = await socket.receive_json_from(timeout=5)
    assert counted == {"event": "catalog.review", "server_id": refund_tool.server_id, "review_count": 0}
    message = await socket.receive_json_from(timeout=5)
    assert message["event"] == "catalog.changed" and message["call_id"] == call.pk
    assert "approving it will not run it" in message["html"]
    await socket.disconnect()


async def test_it_counts_the_tools_that_need_review_on_every_page(person, refund_tool):
    cookie = await signed_in(person, "ann", roles.AUDITOR)
    socket, _ = await open_socket(cookie, query="view=recent")
    await Tool.objects.filter(pk=refund_tool.pk).aupdate(status=Tool.Status.NEEDS_REVIEW)
    await sync_to_async(events.catalog_changed)(refund_tool.server_id)
    message = await socket.receive_json_from(timeout=5)
    assert message == {"event": "catalog.review", "server_id": refund_tool.server_id, "review_count": 1}
    await socket.disconnect()


async def test_it_shows_a_call_page_its_upstream_progress_and_no_other_page(person, make_call, refund_tool):
    cookie = await signed_in(person, "aud", roles.AUDITOR)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    page, _ = await open_socket(cookie, query=f"view=call&id={call.pk}")
    queue, _ = await open_socket(cookie, query="view=queue")

    await events.call_progress(call.pk + 1, {"progress": 1})
    await events.call_progress(call.pk, {"progress": 2, "total": 4, "message": "x" * 1000, "extra": "<b>"})

    message = await page.receive_json_from(timeout=5)
    assert message == {"event": "call.progress", "call_id": call.pk, "progress": 2, "total": 4, "message": "x" * 300}
    await events.call_progress(call.pk, {"progress": "much", "total": True})
    message = await page.receive_json_from(timeout=5)
    assert (message["progress"], message["total"], message["message"]) == (None, None, "")
    assert await queue.receive_nothing(timeout=0.3)
    await page.disconnect()
    await queue.disconnect()
