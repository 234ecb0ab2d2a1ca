"""Fetching a client's metadata document: on this machine only while the console answers loopback names alone,
and elsewhere through django-oauth-toolkit's hardened fetcher; bounded in size, never following a redirect."""

import json
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.test import override_settings
from oauth2_provider.cimd import CIMDError

from approvals.oauth.documents import ConsoleFetcher
from tests.fixtures.http_answers import send
from tests.oauth.certificates import self_signed_context

DOCUMENT = {"client_name": "Agent", "redirect_uris": ["http://127.0.0.1:5000/cb"], "token_endpoint_auth_method": "none"}


class Site(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/moved.json":
            self.send_response(302)
            self.send_header("Location", "https://169.254.169.254/latest/meta-data")
            self.end_headers()
            return
        size = 6 * 1024 if self.path == "/huge.json" else 0
        body = json.dumps({**DOCUMENT, "client_id": f"https://127.0.0.1:{self.server.server_port}{self.path}"})
        body = (body + " " * size).encode()
        send(self, 200, body, {"Content-Type": "application/json"})

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    """A client's web site over https on 127.0.0.1; its base URL."""
    with tempfile.TemporaryDirectory() as folder:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
        server.socket = self_signed_context(Path(folder)).wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"https://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
def test_it_reads_a_document_on_this_machine_while_the_console_is_local(site):
    document, max_age = ConsoleFetcher().fetch(site + "/client.json")

    assert document["client_name"] == "Agent"
    assert max_age >= 300


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=False)
def test_it_refuses_a_document_on_this_machine_when_the_console_serves_others(site):
    with pytest.raises(CIMDError, match="non-public address"):
        ConsoleFetcher().fetch(site + "/client.json")


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
@pytest.mark.parametrize(("path", "problem"), [("/huge.json", "maximum allowed size"), ("/moved.json", "HTTP 302")])
def test_it_refuses_a_document_too_big_or_elsewhere(site, path, problem):
    with pytest.raises(CIMDError, match=problem):
        ConsoleFetcher().fetch(site + path)


@pytest.mark.parametrize("url", ["https://10.0.0.8/client.json", "https://[::ffff:169.254.169.254]/client.json"])
def test_it_refuses_a_document_at_a_private_address(url):
    with pytest.raises(CIMDError, match="non-public address"):
        ConsoleFetcher().fetch(url)
