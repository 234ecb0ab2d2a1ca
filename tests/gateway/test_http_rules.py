"""What the endpoint answers to malformed, foreign, oversized, unauthenticated or too frequent requests."""

import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import override_settings

from approvals.actions.revocation import revoke_token
from approvals.gateway import auth, listing
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import LEGACY, MODERN
from tests.gateway.conftest import IN_PROCESS


def error_of(response: httpx.Response) -> dict:
    assert response.headers["content-type"].startswith("application/json"), response.text
    return response.json()["error"]


def test_it_answers_unparseable_json_with_a_parse_error(raw):
    response = raw.post(b'{"jsonrpc": "2.0", "id": 1, "method": ')

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": NaN}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": -Infinity}}',
    ],
    ids=["nan", "infinity"],
)
def test_it_answers_numbers_json_does_not_have_with_a_parse_error(raw, body):
    response = raw.post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/\\udfff"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"\\udbff": 1}}',
        b'{"jsonrpc": "2.0", "id": "\\ude00\\ud83d", "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": "\ud800", "method": "tools/list"}'.encode("utf-8", "surrogatepass"),
    ],
    ids=["id", "method", "params key", "pair out of order", "raw bytes"],
)
def test_it_answers_a_lone_surrogate_with_a_parse_error(raw, body):
    response = raw.post(body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700
    assert response.json()["id"] is None


def test_it_answers_a_number_too_large_for_a_double_with_a_parse_error(raw):
    response = raw.post(
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {"n": -1e999}}}'
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


def test_it_refuses_a_nul_character_nested_as_deep_as_json_allows(raw):
    deep = b"[" * 600 + b'"a\\u0000b"' + b"]" * 600
    response = raw.post(
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {"q": %s}}}' % deep
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602


def test_it_refuses_a_nul_character_that_no_database_could_store(raw):
    response = raw.post(
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {"q": "a\\u0000b"}}}'
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602
    assert "U+0000" in error_of(response)["message"]


@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}],
        "tools/list",
        42,
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
    ],
    ids=["batch", "string", "number", "neither-request-nor-response", "wrong-version"],
)
def test_it_answers_anything_but_one_message_as_an_invalid_request(raw, body):
    response = raw.post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def test_it_answers_an_unknown_method_with_404_in_the_modern_era(raw):
    response = raw.modern("resources/subscribe", uri="a://x")

    assert response.status_code == 404
    assert error_of(response)["code"] == -32601


def test_it_answers_an_unknown_method_inside_a_200_in_the_legacy_era(raw):
    session_id = raw.initialize()

    response = raw.legacy(session_id, "roots/list")

    assert response.status_code == 200
    assert error_of(response)["code"] == -32601


def test_it_answers_wrongly_typed_params_as_invalid_params(raw):
    session_id = raw.initialize()

    response = raw.legacy(session_id, "tools/list", cursor=7)

    assert error_of(response)["code"] == -32602


def test_it_refuses_a_body_that_declares_more_than_the_limit_and_keeps_the_connection(guarded, settings):
    settings.MCP_MAX_BODY_BYTES = 1000
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "x" * 2000}}

    response = guarded.post(body)

    assert response.status_code == 413
    assert error_of(response)["code"] == -32600
    assert "connection" not in response.headers


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_it_refuses_a_body_far_over_the_limit_without_reading_it_whole_and_closes_the_connection(
    guarded, settings, chunked
):
    settings.MCP_MAX_BODY_BYTES = 1000
    body = b'{"pad": "' + b"x" * 5000 + b'"}'

    response = guarded.post(iter([body[at : at + 500] for at in range(0, len(body), 500)]) if chunked else body)

    assert response.status_code == 413
    assert response.headers["connection"] == "close"


def test_it_refuses_a_chunked_body_once_it_grows_past_the_limit(guarded, settings):
    settings.MCP_MAX_BODY_BYTES = 1000

    def chunks():
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "'
        for _ in range(20):
            yield b"x" * 100
        yield b'"}}'

    response = guarded.post(chunks())

    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.status_code == 413


def test_it_refuses_a_page_from_a_foreign_origin(guarded):
    response = guarded.modern("tools/list", headers={"Origin": "https://attacker.example"})

    assert response.status_code == 403
    assert error_of(response)["code"] == -32600


def test_it_serves_a_page_from_its_own_origin(raw, live_console):
    response = raw.modern("tools/list", headers={"Origin": live_console})

    assert response.status_code == 200


def other_port(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc=f"{parts.hostname}:{parts.port + 1}").geturl()


@pytest.mark.parametrize(
    "origin",
    [
        lambda console: "http://localhost:9999",
        other_port,
        lambda console: console.replace("http://", "https://"),
        lambda console: console.replace("127.0.0.1", "localhost"),
        lambda console: "null",
    ],
    ids=["another name and port", "another port", "another scheme", "another name", "null"],
)
def test_it_refuses_a_page_of_the_same_machine_on_another_port_scheme_or_name(guarded, origin):
    response = guarded.modern("tools/list", headers={"Origin": origin(IN_PROCESS)})

    assert response.status_code == 403
    assert "Origin" in error_of(response)["message"]


@pytest.mark.parametrize("origin", ["https://console.example.com", "https://eu.console.example.com"])
def test_it_serves_a_page_from_a_csrf_trusted_origin(raw, settings, origin):
    settings.CSRF_TRUSTED_ORIGINS = ["https://console.example.com:443", "https://*.console.example.com"]

    assert raw.modern("tools/list", headers={"Origin": origin}).status_code == 200
    assert raw.modern("tools/list", headers={"Origin": "http://eu.console.example.com"}).status_code == 403


def test_it_takes_the_scheme_a_tls_proxy_reports_when_told_to_trust_it(raw, settings, live_console):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    secure = live_console.replace("http://", "https://")

    assert raw.modern("tools/list", headers={"Origin": secure, "X-Forwarded-Proto": "https"}).status_code == 200
    assert raw.modern("tools/list", headers={"Origin": live_console, "X-Forwarded-Proto": "https"}).status_code == 403


def test_it_refuses_a_host_it_does_not_serve_with_403_rather_than_djangos_400(guarded):
    response = guarded.modern("tools/list", headers={"Host": "rebound.attacker.example"})

    assert response.status_code == 403
    assert "Host" in error_of(response)["message"]


def test_it_asks_a_client_without_a_token_to_authenticate(tokenless, live_console):
    response = tokenless.modern("tools/list")

    assert response.status_code == 401
    assert error_of(response)["message"].startswith("Unauthorized")
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer realm="mcp-approval-console"')
    assert f'resource_metadata="{live_console}/.well-known/oauth-protected-resource"' in challenge
    assert 'scope="tools:*"' in challenge
    assert "invalid_token" not in challenge


def test_it_refuses_an_unknown_token_as_invalid(raw):
    response = raw.modern("tools/list", headers={"Authorization": "Bearer mcpc_not-a-real-token"})

    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_it_refuses_a_revoked_token(raw, mcp_url):
    token, secret = create_token("soon revoked")
    revoke_token(token)

    response = raw.modern("tools/list", headers={"Authorization": f"Bearer {secret}"})

    assert response.status_code == 401


def test_it_describes_itself_as_a_protected_resource_of_its_own_authorization_server(live_console):
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        metadata = httpx.get(live_console + path).json()

        assert metadata == {
            "resource": f"{live_console}/mcp",
            "bearer_methods_supported": ["header"],
            "resource_name": "MCP Approval Console",
            "authorization_servers": [live_console],
            "scopes_supported": ["tools:*"],
        }


@override_settings(OAUTH_SERVER=False)
def test_it_describes_itself_without_an_authorization_server_while_oauth_is_off(live_console):
    metadata = httpx.get(live_console + "/.well-known/oauth-protected-resource/mcp").json()

    assert metadata == {
        "resource": f"{live_console}/mcp",
        "bearer_methods_supported": ["header"],
        "resource_name": "MCP Approval Console",
    }


def test_it_refuses_a_body_that_is_not_json(raw):
    response = raw.modern("tools/list", headers={"Content-Type": "text/plain"})

    assert response.status_code == 415


def test_it_refuses_a_client_that_takes_no_json(raw):
    response = raw.modern("tools/list", headers={"Accept": "text/html"})

    assert response.status_code == 406


def test_it_takes_a_client_that_accepts_anything(raw):
    response = raw.modern("tools/list", headers={"Accept": "*/*"})

    assert response.status_code == 200


def test_it_refuses_other_http_methods(raw):
    response = raw.client.put(raw.url, headers=raw.headers, json={})

    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST, DELETE"


def test_it_limits_each_token_to_its_requests_a_minute(raw, settings):
    settings.MCP_RATE_LIMIT_PER_MINUTE = 3

    statuses = [raw.modern("tools/list").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    refused = raw.modern("tools/list")
    assert error_of(refused)["message"].startswith("Too many requests")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60


def test_it_counts_every_one_of_many_requests_made_at_once(monkeypatch):
    # The clock stands still in the middle of a minute, so that every count falls in one window.
    middle_of_a_minute = time.time() // 60 * 60 + 30
    monkeypatch.setattr(auth, "time", SimpleNamespace(time=lambda: middle_of_a_minute))
    credential = secrets.token_hex(8)

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(lambda _: auth.count_request(credential), range(200)))

    assert sorted(counts) == list(range(1, 201))


def test_it_counts_each_token_on_its_own(raw, settings):
    settings.MCP_RATE_LIMIT_PER_MINUTE = 1
    other = create_token("another client")[1]

    first = raw.modern("tools/list")
    second = raw.modern("tools/list", headers={"Authorization": f"Bearer {other}"})

    assert (first.status_code, second.status_code) == (200, 200)


def test_it_refuses_a_guessed_token_as_unknown_however_often_and_never_counts_it_against_the_real_one(raw, settings):
    settings.MCP_RATE_LIMIT_PER_MINUTE = 2
    guessed = {"Authorization": "Bearer mcpc_guessed"}

    statuses = [raw.modern("tools/list", headers=guessed).status_code for _ in range(4)]

    assert statuses == [401, 401, 401, 401]
    assert raw.modern("tools/list").status_code == 200


def test_it_answers_an_unexpected_failure_as_a_json_rpc_error_not_an_html_page(raw, monkeypatch):
    def broken(*args):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(listing, "tools_page", broken)

    response = raw.modern("tools/list")

    assert response.status_code == 500
    assert error_of(response) == {"code": -32603, "message": "Internal error"}


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_it_accepts_a_notification_with_202_and_no_body(raw, version):
    headers = {"MCP-Protocol-Version": version}
    if version == LEGACY:
        headers["Mcp-Session-Id"] = raw.initialize()

    response = raw.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)

    assert response.status_code == 202
    assert response.content == b""
