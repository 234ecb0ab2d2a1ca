"""A client of /mcp learns that the console's stored credentials cannot be decrypted, and sees none of them."""

import pytest

from tests.fixtures.catalog import make_server, make_tool

HEADER_VALUE = "Bearer hdr-5d3a91-distinctive"


@pytest.mark.django_db(transaction=True)
def test_it_answers_a_json_rpc_error_when_the_key_cannot_decrypt_the_credentials(guarded, settings):
    server = make_server("Tracker", headers={"Authorization": HEADER_VALUE})
    make_tool(server, "open_issue")
    settings.CREDENTIALS_KEY = "not the key they were sealed with"
    response = guarded.modern("tools/call", name="records_open_issue", arguments={})
    assert response.status_code == 503
    assert HEADER_VALUE not in response.text
    assert "cannot be decrypted with the configured CREDENTIALS_KEY" in response.json()["error"]["message"]
