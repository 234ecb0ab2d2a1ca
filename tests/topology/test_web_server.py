"""The recipe's web server (granian, as `make run` and the Dockerfile start it) serving the whole console: the
start-up work on ASGI lifespan events, the operators' websocket, a held /mcp stream and a client hanging up on
it, the client's address behind a proxy, and a stop that ends what the process held."""

import asyncio
import json
import re
import signal
import socket
import time

import aiohttp
import httpx
import pytest

from approvals.calls import ending
from approvals.calls.models import Call
from approvals.demo import COMMAND_LINE
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import add_synced_server
from tests.fixtures.gateway import hold_call
from tests.fixtures.people import PASSWORD, make_user
from tests.fixtures.processes import gone, web_process
from tests.fixtures.servers import free_port, serving_pid
from tests.fixtures.waiting import eventually, wait_until
from tests.topology.test_processes import logged_in

pytestmark = pytest.mark.django_db(transaction=True)

# Well short of a lease's lapse or a call's timeout, which would end a call whatever the server did.
ENDED_WITHIN = 15
STOPPED_WITHIN = 15


def a_held_call_awaits(secret: str, port: int):
    """A task holding a call to the demo's lookup (no rule: an operator must decide) on an SSE stream."""
    http = httpx.AsyncClient(timeout=None)
    url = f"http://127.0.0.1:{port}/mcp"
    task = asyncio.create_task(hold_call(http, url, secret, "demo_lookup_customer", {"customer_id": "C001"}, 1))
    task.add_done_callback(lambda _: asyncio.ensure_future(http.aclose()))
    return task


async def one_pending():
    return await Call.objects.filter(status=Call.Status.PENDING).acount() == 1


def console_with_a_tool():
    make_user("ann", superuser=True)
    _, secret = create_token("agent")
    add_synced_server("Demo", transport="stdio", command=COMMAND_LINE)
    return secret


def test_it_pushes_a_held_call_to_an_operators_socket_and_cancels_it_when_the_client_hangs_up(tmp_path):
    secret, port = console_with_a_tool(), free_port()

    async def scenario(cookies: str):
        headers = {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookies}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"ws://127.0.0.1:{port}/ws/console/?view=queue", headers=headers) as socket,
        ):
            holding = a_held_call_awaits(secret, port)
            pushed = json.loads((await socket.receive(timeout=ENDED_WITHIN)).data)
            assert pushed["event"] == "call.pending" and pushed["pending_count"] == 1
            holding.cancel()
            await asyncio.gather(holding, return_exceptions=True)
            started = time.monotonic()
            await eventually(
                Call.objects.filter(status=Call.Status.CANCELLED).aexists,
                timeout=ENDED_WITHIN,
                message="the call of the client who hung up cancelled",
            )
            return time.monotonic() - started

    log = tmp_path / "web.log"
    with log.open("wb") as output, web_process(port, output=output):
        operator = logged_in(f"http://127.0.0.1:{port}", "ann", PASSWORD)
        cookies = "; ".join(f"{name}={value}" for name, value in operator.cookies.items())
        assert asyncio.run(scenario(cookies)) < ENDED_WITHIN
        # Written once the request has ended, which a stop would not wait for.
        wait_until(lambda: '"POST /mcp" 200' in log.read_text(), message="the held call's access line")
    call = Call.objects.get()
    assert call.reason != ending.ABANDONED
    # The start-up work, which the lifespan startup event ran: the stdio probe's finding.
    assert "stdio servers:" in log.read_text()
    assert '"WEBSOCKET /ws/console/?view=queue" 101' in log.read_text()


def test_it_stops_when_told_to_though_a_call_is_held():
    """docker stop: SIGTERM to granian's process, which stops its worker, killing it if a request outlasts the
    recipe's 5 s; the held client's stream ends with it (its call then ends as a killed process's would)."""
    secret, port = console_with_a_tool(), free_port()

    async def held_then_stopped(process):
        holding = a_held_call_awaits(secret, port)
        await eventually(one_pending, message="a held call")
        worker = serving_pid(process)
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(holding, timeout=STOPPED_WITHIN)
        return worker

    with web_process(port) as process:
        started = time.monotonic()
        worker = asyncio.run(held_then_stopped(process))
        process.wait(STOPPED_WITHIN)
        assert time.monotonic() - started < STOPPED_WITHIN
    assert gone(worker)


@pytest.mark.parametrize(("trusted", "client"), [("127.0.0.1", "203.0.113.7:0"), ("", "127.0.0.1:")])
def test_it_takes_the_clients_address_from_the_proxies_it_trusts_alone(tmp_path, trusted, client):
    port = free_port()
    forwarded = {"X-Forwarded-For": "203.0.113.7"}
    with (
        (tmp_path / "web.log").open("wb") as output,
        web_process(port, {"TRUSTED_PROXIES": trusted, "LOG_FORMAT": "json"}, output=output),
    ):
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", headers=forwarded).status_code == 200
        wait_until(lambda: "/healthz" in (tmp_path / "web.log").read_text(), message="the access line")
    lines = [json.loads(line) for line in (tmp_path / "web.log").read_text().splitlines()]
    clients = [line["client"] for line in lines if line.get("request_line") == "GET /healthz"]
    assert len(clients) == 1 and clients[0].startswith(client), clients


def answer_on(client: socket.socket) -> tuple[bytes, bytes]:
    """One HTTP answer read whole from `client`: its head and its body, as long as its Content-Length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += received(client)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?im)^content-length: *(\d+)", head)[1])
    while len(body) < length:
        body += received(client)
    return head, body


def received(client: socket.socket) -> bytes:
    chunk = client.recv(65536)
    assert chunk, "the console closed the connection"
    return chunk


def refused_while_its_body_comes(port: int, head: str, body: bytes, env: dict | None = None) -> tuple[bytes, str]:
    """The answer to a request whose body comes late, as a large body's does: a server that answered and closed the
    connection meanwhile would reset it as the rest arrives, and the client would lose the answer. Asserted: the
    connection still serves a request after it."""
    with web_process(port, env), socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(head.encode() + body[:1000])
        time.sleep(0.5)
        client.sendall(body[1000:])
        status, answer = answer_on(client)
        client.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert answer_on(client)[0].startswith(b"HTTP/1.1 200")
    return status, json.loads(answer)["error"]["message"]


def padded_ping(size: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * size}}).encode()


def test_it_answers_a_refused_request_whose_body_is_still_coming_and_keeps_the_connection():
    secret, port = console_with_a_tool(), free_port()
    body = padded_ping(200_000)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: https://attacker.example\r\n"
        f"Authorization: Bearer {secret}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    status, message = refused_while_its_body_comes(port, head, body)
    assert status.startswith(b"HTTP/1.1 403"), status
    assert "this Origin" in message


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_it_answers_a_body_over_the_limit_with_413_though_it_is_still_coming(framing):
    secret, port = console_with_a_tool(), free_port()
    body = padded_ping(30_000)
    if framing == "length":
        framing_header = f"Content-Length: {len(body)}"
    else:
        framing_header = "Transfer-Encoding: chunked"
        pieces = (body[:15_000], body[15_000:], b"")
        body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {secret}\r\n"
        f"Content-Type: application/json\r\n{framing_header}\r\n\r\n"
    )
    status, message = refused_while_its_body_comes(port, head, body, {"MCP_MAX_BODY_BYTES": "10000"})
    assert status.startswith(b"HTTP/1.1 413"), status
    assert message == "Request body too large: at most 10000 bytes"
