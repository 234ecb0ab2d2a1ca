"""Fetching a client's metadata document: on this machine only while the console answers loopback names alone,
and elsewhere through django-oauth-toolkit's hardened fetcher; bounded in size, never following a redirect."""

import json
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.test import override_settings
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import Application

from approvals import roles
from approvals.oauth.documents import ConsoleFetcher
from tests.fixtures.http_answers import send
from tests.fixtures.people import make_user
from tests.oauth.certificates import self_signed_context
from tests.oauth.flow import challenge_of

DOCUMENT = {"client_name": "Agent", "redirect_uris": ["http://127.0.0.1:5000/cb"], "token_endpoint_auth_method": "none"}


class Site(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.requested.append(self.path)
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


@dataclass
class ClientSite:
    url: str
    certificate: Path
    requested: list


@pytest.fixture
def site():
    """A client's web site over https on 127.0.0.1, with a certificate of its own that nothing trusts yet."""
    with tempfile.TemporaryDirectory() as folder:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
        server.requested = []
        server.socket = self_signed_context(Path(folder)).wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield ClientSite(f"https://127.0.0.1:{server.server_port}", Path(folder) / "cert.pem", server.requested)
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


@pytest.fixture
def trusted(site, monkeypatch):
    """The site's certificate trusted, as a developer's own CA is through SSL_CERT_FILE."""
    monkeypatch.setenv("SSL_CERT_FILE", str(site.certificate))
    return site


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
def test_it_reads_a_document_on_this_machine_while_the_console_is_local(trusted):
    document, max_age = ConsoleFetcher().fetch(trusted.url + "/client.json")

    assert document["client_name"] == "Agent"
    assert max_age >= 300


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=False)
def test_it_refuses_a_document_on_this_machine_when_the_console_serves_others(site):
    with pytest.raises(CIMDError, match="non-public address"):
        ConsoleFetcher().fetch(site.url + "/client.json")


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
@pytest.mark.parametrize(("path", "problem"), [("/huge.json", "maximum allowed size"), ("/moved.json", "HTTP 302")])
def test_it_refuses_a_document_too_big_or_elsewhere(trusted, path, problem):
    with pytest.raises(CIMDError, match=problem):
        ConsoleFetcher().fetch(trusted.url + path)


@pytest.mark.parametrize("url", ["https://10.0.0.8/client.json", "https://[::ffff:169.254.169.254]/client.json"])
def test_it_refuses_a_document_at_a_private_address(url):
    with pytest.raises(CIMDError, match="non-public address"):
        ConsoleFetcher().fetch(url)


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
def test_it_checks_the_certificate_of_a_document_on_this_machine(site):
    with pytest.raises(CIMDError, match="CERTIFICATE_VERIFY_FAILED"):
        ConsoleFetcher().fetch(site.url + "/client.json")


def authorization_url(client_id: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": DOCUMENT["redirect_uris"][0],
        "code_challenge": challenge_of("v" * 50),
        "code_challenge_method": "S256",
        "state": "s",
    }
    return "/oauth/authorize/?" + urlencode(params)


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
def test_it_fetches_the_document_of_a_client_a_person_is_sent_to_allow(client, trusted, db):
    client.force_login(make_user("ada", roles.ADMIN))

    response = client.get(authorization_url(trusted.url + "/client.json"), HTTP_SEC_FETCH_DEST="document")

    assert response.status_code == 200
    assert "Allow Agent to use this console?" in response.content.decode()
    assert trusted.requested == ["/client.json"]


@override_settings(OAUTH_LOOPBACK_DOCUMENTS=True)
def test_it_fetches_no_document_for_another_pages_form_or_image(client, trusted, db):
    client.force_login(make_user("ada", roles.ADMIN))
    client_id = trusted.url + "/client.json"
    body = {"grant_type": "authorization_code", "client_id": client_id, "code": "x" * 30, "code_verifier": "v" * 50}

    token = client.post("/oauth/token/", body, HTTP_ORIGIN="https://elsewhere.example")
    image = client.get(authorization_url(client_id), HTTP_SEC_FETCH_DEST="image")

    assert token.status_code == 401
    assert token.json()["error"] == "invalid_client"
    assert image.status_code == 400
    assert trusted.requested == []
    assert not Application.objects.exists()
