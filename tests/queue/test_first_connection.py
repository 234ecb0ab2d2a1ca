"""A live page's first connection: the socket tells the page whether anything happened between its render and the
moment the socket joined the live groups, which no pushed event would bring it."""

import re

import pytest
from asgiref.sync import sync_to_async

from approvals import roles
from approvals.calls import deciding
from tests.fixtures.sockets import cookies_of, open_socket

pytestmark = pytest.mark.django_db(transaction=True)

STALE = {"event": "stale"}


def rendered_mark(client, path: str) -> str:
    """The mark of the state `path` was rendered from, as the page hands it to its script."""
    found = re.search(r'<body[^>]* data-live-since="(\d+)"', client.get(path).content.decode())
    assert found, f"{path} carries no mark of what it was rendered from"
    return found.group(1)


async def operator(person):
    _, client = await sync_to_async(person)("ann", roles.OPERATOR)
    return client, await sync_to_async(cookies_of)(client)


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/queue/", "view=queue"),
        ("/calls/", "view=recent"),
        ("/review/", ""),
        ("/calls/{call}/", "view=call&id={call}"),
    ],
)
async def test_it_tells_a_page_that_a_call_arrived_after_its_render_to_read_itself_again(
    person, make_call, refund_tool, path, query
):
    shown = await sync_to_async(make_call)(refund_tool, {"order_id": 1, "amount": 1})
    client, cookie = await operator(person)
    mark = await sync_to_async(rendered_mark)(client, path.format(call=shown.pk))

    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})

    socket, connected = await open_socket(cookie, query=f"{query.format(call=shown.pk)}&since={mark}")
    assert connected
    assert await socket.receive_json_from(timeout=5) == STALE
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()


async def test_it_tells_a_call_s_page_that_its_call_was_decided_after_its_render(person, make_call, refund_tool):
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    client, cookie = await operator(person)
    bob, _ = await sync_to_async(person)("bob", roles.OPERATOR)
    mark = await sync_to_async(rendered_mark)(client, f"/calls/{call.pk}/")

    await sync_to_async(deciding.decide)(call.pk, bob, False, "wrong order")

    socket, _ = await open_socket(cookie, query=f"view=call&id={call.pk}&since={mark}")
    assert await socket.receive_json_from(timeout=5) == STALE
    await socket.disconnect()


async def test_it_says_nothing_to_a_page_rendered_from_the_state_it_joins(person, make_call, refund_tool):
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})
    client, cookie = await operator(person)
    mark = await sync_to_async(rendered_mark)(client, "/queue/")

    socket, connected = await open_socket(cookie, query=f"view=queue&since={mark}")

    assert connected
    assert await socket.receive_nothing(timeout=0.3)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 1013, "amount": 45})
    pushed = await socket.receive_json_from(timeout=5)
    assert pushed["event"] == "call.pending" and pushed["call_id"] == call.pk
    await socket.disconnect()


async def test_it_leaves_a_reconnecting_page_to_read_itself_again(person, make_call, refund_tool):
    # A page connecting again reads itself anyway (console.js), so it names no mark and is told nothing.
    _, cookie = await operator(person)
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})

    socket, connected = await open_socket(cookie, query="view=queue")

    assert connected
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()


@pytest.mark.parametrize("mark", ["", "soon", "-1x"])
async def test_it_takes_a_mark_it_cannot_read_as_none(person, make_call, refund_tool, mark):
    _, cookie = await operator(person)
    await sync_to_async(make_call)(refund_tool, {"order_id": 1012, "amount": 40})

    socket, connected = await open_socket(cookie, query=f"view=queue&since={mark}")

    assert connected
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()
