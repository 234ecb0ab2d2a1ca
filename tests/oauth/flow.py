"""An OAuth client's side of the console's authorization server, driven through Django's test client."""

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

SERVER = "http://testserver"
REDIRECT = "http://127.0.0.1:33418/callback"


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def register(client, **metadata) -> dict:
    body = {
        "client_name": "Test Agent",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    return client.post("/oauth/register/", json.dumps(body), content_type="application/json")


@dataclass
class Authorization:
    client_id: str
    redirect_uri: str = REDIRECT
    server: str = SERVER
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    def params(self, **changes) -> dict:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": challenge_of(self.verifier),
            "code_challenge_method": "S256",
            "resource": self.server + "/mcp",
            "scope": "tools:*",
        }
        params.update(changes)
        return {key: value for key, value in params.items() if value is not None}

    def url(self, **changes) -> str:
        return "/oauth/authorize/?" + urlencode(self.params(**changes))

    def allow(self, browser, expiry="30d", decision="allow", **changes) -> dict:
        """The query the console sends the client back with, after `decision` on the consent page."""
        response = browser.post(self.url(**changes), {"decision": decision, "expiry": expiry})
        assert response.status_code == 302, response.content[:500]
        return sent_back(response)

    def exchange(self, client, code, **changes):
        body = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": self.verifier,
            "resource": self.server + "/mcp",
            **changes,
        }
        return token_request(client, {k: v for k, v in body.items() if v is not None})

    def refresh(self, client, refresh_token, **changes):
        body = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id, **changes}
        return token_request(client, body)

    def grant(self, browser, client, **consent) -> dict:
        """Allowed and exchanged: the token response."""
        response = self.exchange(client, self.allow(browser, **consent)["code"])
        assert response.status_code == 200, response.content
        return response.json()


def token_request(client, body: dict):
    return client.post("/oauth/token/", urlencode(body), content_type="application/x-www-form-urlencoded")


def sent_back(response) -> dict:
    location = urlsplit(response["Location"])
    return {key: values[0] for key, values in parse_qs(location.query).items()} | {
        "to": f"{location.scheme}://{location.netloc}{location.path}"
    }
