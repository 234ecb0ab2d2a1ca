"""The HTTP transport carrying an OAuth bearer: refused tokens go to the Authorizer once, on a real server on
127.0.0.1 that accepts one token and challenges every other."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from approvals.upstream import AuthorizationRequired, ServerSpec, open_session
from tests.fixtures.http_answers import send

GOOD = "good-token"
PRM = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"


class Handler(BaseHTTPRequestHandler):
    """A legacy server that answers only `Bearer good-token`; tools/list also wants scope (403) when `/narrow`."""

    seen: list

    def log_message(self, *args):
        pass

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((message.get("method"), self.headers.get("Authorization")))
        if self.headers.get("Authorization") != f"Bearer {GOOD}":
            return self.answer(401, {}, f'Bearer resource_metadata="{PRM}", scope="files:read"')
        if self.path == "/narrow" and message.get("method") == "tools/list":
            return self.answer(403, {}, 'Bearer error="insufficient_scope", scope="files:read files:write"')
        if "id" not in message:
            return self.answer(202, None)
        results = {
            "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}},
            "tools/list": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
        }
        self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": results.get(message["method"], {})})

    def answer(self, status, body, challenge=None):
        data = b"" if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if challenge:
            headers["WWW-Authenticate"] = challenge
        send(self, status, data, headers)


@pytest.fixture
def server():
    seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Scripted", (Handler,), {"seen": seen}))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


class Authorizer:
    """Hands out `first`, and on a refusal `then` (or raises as a grant needing a person would)."""

    def __init__(self, first, then=None):
        self.token, self.then, self.refusals = first, then, []

    async def bearer(self):
        return self.token

    async def rejected(self, token, status, challenge):
        self.refusals.append((token, status, challenge))
        if self.then is None:
            raise AuthorizationRequired("needs authorization", status=status, challenge=challenge)
        self.token = self.then
        return self.then


def spec(url, authorizer=None, revision="2025-06-18"):
    return ServerSpec(name="files", transport="http", url=url, authorizer=authorizer, revision=revision, timeout=5)


async def test_a_refused_token_is_replaced_once_and_the_request_sent_again(server):
    url, seen = server
    authorizer = Authorizer("stale-token", then=GOOD)
    async with open_session(spec(f"{url}/mcp", authorizer)) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["t"]
    assert authorizer.refusals == [("stale-token", 401, {"resource_metadata": PRM, "scope": "files:read"})]
    assert seen[:2] == [("initialize", "Bearer stale-token"), ("initialize", f"Bearer {GOOD}")]
    assert all(auth == f"Bearer {GOOD}" for _, auth in seen[1:])


async def test_a_server_answering_401_to_no_token_needs_authorization_at_once_whatever_the_era(server):
    url, seen = server
    with pytest.raises(AuthorizationRequired) as refused:
        async with open_session(spec(f"{url}/mcp", revision="")):
            pass
    assert (refused.value.status, refused.value.scope) == (401, "files:read")
    assert refused.value.challenge["resource_metadata"] == PRM
    assert seen == [("server/discover", None)]  # a refusal of authorization is no verdict on the era


async def test_insufficient_scope_goes_to_the_authorizer_and_its_refusal_to_the_caller(server):
    url, _ = server
    authorizer = Authorizer(GOOD)
    async with open_session(spec(f"{url}/narrow", authorizer)) as session:
        with pytest.raises(AuthorizationRequired, match="needs authorization") as refused:
            await session.list_tools()
    assert refused.value.status == 403
    assert authorizer.refusals == [(GOOD, 403, {"error": "insufficient_scope", "scope": "files:read files:write"})]
