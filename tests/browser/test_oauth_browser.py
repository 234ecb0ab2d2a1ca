"""The official SDK's OAuth client connects to the console from nothing, an operator allowing it in Chromium.

It gets the 401, discovers the console's metadata, registers (by a Client ID Metadata Document this test
serves on loopback, or dynamically), the operator signs in and presses Allow, and the SDK takes the code
on its loopback redirect, lists the tools and makes an allowed call. Revoked on the Tokens page, the grant
is refused at once; its refresh token works once and not twice.
"""

import asyncio
import json
import tempfile
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from asgiref.sync import sync_to_async
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.oauth.models import RoleScope
from approvals.policy.models import PolicyRule
from approvals.tokens.models import ClientToken
from tests.browser.conftest import CHROMIUM, LAUNCH_ARGS
from tests.fixtures.gateway import MODERN, modern_envelope
from tests.fixtures.people import PASSWORD, make_user
from tests.oauth.certificates import self_signed_context

pytestmark = pytest.mark.browser


class MemoryStorage:
    """The SDK's token storage, kept in memory for one test."""

    def __init__(self):
        self.tokens = self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


@asynccontextmanager
async def loopback_server(answer, context=None):
    """A one-route HTTP(S) server on 127.0.0.1: `answer(path)` gives (content type, body). Yields its base URL."""

    async def serve(reader, writer):
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            path = request.split(b" ")[1].decode()
            content_type, body = answer(path)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    host, port = server.sockets[0].getsockname()[:2]
    async with server:
        yield f"{'https' if context else 'http'}://{host}:{port}"


class Operator:
    """An operator's Chromium: signs in when sent to the console, and presses Allow on the consent page."""

    def __init__(self, browser, username):
        self.browser, self.username = browser, username
        self.page = None
        self.consents = 0

    async def allow(self, url: str):
        self.page = self.page or await self.browser.new_page()
        await self.page.goto(url)
        if await self.page.get_by_label("Password").count():
            await self.page.get_by_label("Username").fill(self.username)
            await self.page.get_by_label("Password").fill(PASSWORD)
            await self.page.get_by_role("button", name="Log in").click()
        await self.page.get_by_role("heading", name="Allow").wait_for(timeout=15_000)
        self.consents += 1
        await self.page.get_by_role("button", name="Allow", exact=True).click()

    async def revoke(self, console: str):
        await self.page.goto(console + "/tokens/")
        row = self.page.get_by_role("row").filter(has_text="OAuth")
        await row.get_by_role("link", name="Revoke…").click()
        await self.page.get_by_role("button", name="Revoke").click()
        await self.page.get_by_text("Revoked").first.wait_for()


@asynccontextmanager
async def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium-headless-shell)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


@pytest.mark.parametrize(
    ("mode", "registration"),
    [("auto", "document"), ("legacy", "dynamic")],
    ids=["modern-by-metadata-document", "legacy-by-dynamic-registration"],
)
async def test_it_lets_the_sdk_connect_by_oauth_once_an_operator_allows_it(
    live_console, mcp_url, demo_server, mode, registration, monkeypatch
):
    await sync_to_async(make_user)("olivia", roles.OPERATOR)
    await RoleScope.objects.acreate(role=roles.OPERATOR, tool_globs=["demo_*"])
    await PolicyRule.objects.acreate(name="reads are fine", action="allow", tool_glob="demo_lookup_*")
    codes = asyncio.Queue()

    def callback(path):
        codes.put_nowait({key: values[0] for key, values in parse_qs(urlsplit(path).query).items()})
        return "text/plain", b"Signed in: you may close this page."

    async with AsyncExitStack() as stack:
        redirect_base = await stack.enter_async_context(loopback_server(callback))
        redirect_uri = redirect_base + "/callback"
        metadata = OAuthClientMetadata(
            client_name=f"SDK by {registration}",
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        )
        document_url = None
        if registration == "document":
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            serving = loopback_server(lambda path: ("application/json", document), self_signed_context(folder))
            # The client's own certificate, trusted by the console as a developer's CA would be.
            monkeypatch.setenv("SSL_CERT_FILE", str(folder / "cert.pem"))
            document_base = await stack.enter_async_context(serving)
            document_url = document_base + "/client.json"
            document = json.dumps(
                {"client_id": document_url, **metadata.model_dump(mode="json", exclude_none=True)}
            ).encode()
        operator = Operator(await stack.enter_async_context(chromium()), "olivia")

        async def answer_code():
            sent = await codes.get()
            return AuthorizationCodeResult(code=sent["code"], state=sent.get("state"), iss=sent.get("iss"))

        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=mcp_url,
            client_metadata=metadata,
            storage=storage,
            redirect_handler=operator.allow,
            callback_handler=answer_code,
            client_metadata_url=document_url,
        )
        http = create_mcp_http_client(auth=provider)
        async with Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client:
            listed = await client.list_tools()
            result = await client.call_tool("demo_lookup_customer", {"customer_id": "C007"})

        assert operator.consents == 1
        assert "demo_lookup_customer" in {tool.name for tool in listed.tools}
        assert not result.is_error, text_of(result)
        assert "C007" in text_of(result)
        token = await ClientToken.objects.select_related("owner", "oauth_grant__application").aget()
        assert token.owner.username == "olivia"
        assert token.last_used_at is not None
        client_id = token.oauth_grant.application.client_id
        assert client_id == (document_url or storage.client_info.client_id)
        assert token.oauth_grant.application.name == f"SDK by {registration}"

        async with httpx.AsyncClient(base_url=live_console) as raw:

            async def refresh(refresh_token):
                body = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
                return await raw.post("/oauth/token/", data=body)

            async def tools_list(access_token):
                headers = {
                    "Authorization": f"Bearer {access_token}",
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": MODERN,
                    "Mcp-Method": "tools/list",
                }
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern_envelope()}
                return await raw.post("/mcp", json=body, headers=headers)

            renewed = await refresh(storage.tokens.refresh_token)
            assert renewed.status_code == 200
            access = renewed.json()["access_token"]
            assert (await tools_list(access)).status_code == 200

            await operator.revoke(live_console)

            refused = await tools_list(access)
            assert refused.status_code == 401
            assert "revoked" in refused.headers["WWW-Authenticate"]
            assert (await refresh(storage.tokens.refresh_token)).json()["error"] == "invalid_grant"
            assert (await refresh(renewed.json()["refresh_token"])).json()["error"] == "invalid_grant"

    actions = [event.action async for event in AuditEvent.objects.filter(action__startswith="oauth.").order_by("seq")]
    assert actions == ["oauth.granted", "oauth.refreshed"]
    assert await AuditEvent.objects.filter(action="token.revoked", token_id=token.pk).aexists()
