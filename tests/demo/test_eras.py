"""The demo server speaks the handshake era and the 2026-07-28 era on the same stdio command."""

from mcp_types.methods import validate_server_result

from tests.demo.conftest import ALL_VERSIONS, MODERN, both_eras, connect, envelope


@both_eras
async def test_it_agrees_on_the_newest_version_of_each_era_with_the_sdk_client(mode, version):
    async with connect(mode) as client:
        assert client.protocol_version == version
        assert client.server_info.name == "customer-records-demo"
        assert client.server_capabilities.tools is not None
        assert "lookup_customer" in client.instructions


async def test_it_describes_itself_on_server_discover_in_the_2026_shape(raw):
    answer = await raw.request(1, "server/discover", envelope())

    result = answer["result"]
    validate_server_result("server/discover", MODERN, result)
    assert result["supportedVersions"] == ALL_VERSIONS
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "customer-records-demo"
    assert result["cacheScope"] == "public" and result["ttlMs"] > 0


async def test_it_names_the_versions_it_speaks_when_a_request_carries_an_unknown_one(raw):
    answer = await raw.request(1, "server/discover", envelope(version="2099-01-01"))

    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": ALL_VERSIONS, "requested": "2099-01-01"}


async def test_it_still_accepts_initialize_after_refusing_a_discover_probe(raw):
    await raw.request(1, "server/discover", envelope(version="2099-01-01"))

    assert (await raw.initialize("2025-11-25"))["protocolVersion"] == "2025-11-25"


async def test_it_refuses_initialize_on_a_connection_already_speaking_2026(raw):
    await raw.request(1, "server/discover", envelope())

    handshake = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    answer = await raw.request(2, "initialize", handshake)

    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"]["supported"] == [MODERN]


async def test_it_refuses_the_2026_envelope_on_an_initialized_connection(raw):
    await raw.initialize("2025-11-25")

    answer = await raw.request(1, "tools/list", envelope())

    assert answer["error"]["code"] == -32600


async def test_it_echoes_an_older_legacy_version_that_the_client_asks_for(raw):
    assert (await raw.initialize("2025-03-26"))["protocolVersion"] == "2025-03-26"


async def test_it_offers_its_newest_legacy_version_when_initialize_asks_for_an_unknown_one(raw):
    assert (await raw.initialize("2024-01-01"))["protocolVersion"] == "2025-11-25"


async def test_it_wants_initialize_or_the_envelope_before_anything_but_ping(raw):
    assert (await raw.request(1, "ping"))["result"] == {}
    assert (await raw.request(2, "tools/list"))["error"]["code"] == -32600


async def test_it_asks_2026_requests_for_their_client_capabilities(raw):
    params = envelope()
    del params["_meta"]["io.modelcontextprotocol/clientCapabilities"]

    assert (await raw.request(1, "tools/list", params))["error"]["code"] == -32602


async def test_it_stamps_every_2026_result_with_its_type_and_identity(raw):
    listed = (await raw.request(1, "tools/list", envelope()))["result"]
    quote = envelope(name="quote_order", arguments={"order_id": "O1001"})
    called = (await raw.request(2, "tools/call", quote))["result"]

    validate_server_result("tools/list", MODERN, listed)
    validate_server_result("tools/call", MODERN, called)
    for result in (listed, called):
        assert result["resultType"] == "complete"
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "1.0.0"
    assert listed["cacheScope"] == "public"


async def test_it_has_no_ping_and_no_log_level_in_2026(raw):
    assert (await raw.request(1, "ping", envelope()))["error"]["code"] == -32601
    assert (await raw.request(2, "logging/setLevel", envelope(level="info")))["error"]["code"] == -32601


async def test_it_has_no_server_discover_in_the_handshake_era(raw):
    await raw.initialize("2025-11-25")

    assert (await raw.request(1, "server/discover"))["error"]["code"] == -32601
