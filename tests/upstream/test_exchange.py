import pytest

from approvals.protocol.jsonrpc import Response
from approvals.upstream.errors import UpstreamError
from approvals.upstream.exchange import parse


def test_it_replaces_nul_in_what_an_upstream_sends():
    message = parse(
        b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "a\\u0000b"}]}}', "up"
    )
    assert message == Response(1, result={"content": [{"type": "text", "text": "a\ufffdb"}]})


def test_it_names_the_server_that_sent_a_malformed_message():
    with pytest.raises(UpstreamError, match="up: sent a malformed message"):
        parse(b'{"jsonrpc": "2.0", "id": 1, "result": NaN}', "up")
