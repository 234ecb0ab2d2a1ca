"""An OpenID provider in-process: requests.get and requests.post answer for it, so that the console's SSO code, and
mozilla-django-oidc's beneath it, run whole without a server. tests/browser/test_sso_browser.py uses a real one."""

import base64
import hashlib
import json
import secrets
import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from approvals.signin import provider

ISSUER = "https://idp.example"
CLIENT_ID, CLIENT_SECRET = "console", "client secret"
ROLE_MAP = {"mcp-admins": "admin", "mcp-operators": "operator", "mcp-auditors": "auditor"}


def answer(url: str, body, status: int = 200) -> requests.Response:
    response = requests.Response()
    response.status_code, response.url = status, url
    response._content = json.dumps(body).encode()
    response.headers["Content-Type"] = "application/json"
    return response


class FakeProvider:
    """Accounts by subject with their groups; signs ID tokens with `alg` (RS256 or ES256) unless a test says else."""

    def __init__(self, alg="ES256"):
        self.alg, self.kid = alg, f"key-{alg}"
        self.key = ec.generate_private_key(ec.SECP256R1()) if alg == "ES256" else rsa.generate_private_key(65537, 2048)
        self.accounts: dict[str, dict] = {}
        self.pending: dict[str, dict] = {}
        self.token_requests: list[dict] = []
        self.discovery = {
            "issuer": ISSUER,
            "authorization_endpoint": f"{ISSUER}/auth",
            "token_endpoint": f"{ISSUER}/token",
            "userinfo_endpoint": f"{ISSUER}/me",
            "jwks_uri": f"{ISSUER}/jwks",
        }
        # What a test changes to make the provider misbehave: claims put into the ID token, the header's algorithm.
        self.id_token_extra: dict = {}
        self.userinfo_extra: dict = {}

    def public_jwk(self) -> dict:
        algorithm = jwt.algorithms.ECAlgorithm if self.alg == "ES256" else jwt.algorithms.RSAAlgorithm
        return {**algorithm.to_jwk(self.key.public_key(), as_dict=True), "kid": self.kid, "alg": self.alg, "use": "sig"}

    def id_token(self, claims: dict, key=None, alg=None, headers=None) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": CLIENT_ID, "iat": now, "exp": now + 300, **claims}
        return jwt.encode(body, key or self.key, algorithm=alg or self.alg, headers=headers or {"kid": self.kid})

    def authorize(self, location: str, subject: str) -> str:
        """What the provider does with the console's redirect once `subject` signed in: the callback's query."""
        query = {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}
        code = secrets.token_urlsafe(16)
        self.pending[code] = {"subject": subject, **query}
        return f"code={code}&state={query['state']}"

    def get(self, url, headers=None, **kwargs):
        if url == f"{ISSUER}{provider.WELL_KNOWN}":
            return answer(url, self.discovery)
        if url == self.discovery["jwks_uri"]:
            return answer(url, {"keys": [self.public_jwk()]})
        if url == self.discovery["userinfo_endpoint"]:
            subject = (headers or {}).get("Authorization", "").removeprefix("Bearer access-")
            if subject not in self.accounts:
                return answer(url, {"error": "invalid_token"}, 401)
            return answer(url, {"sub": subject, **self.accounts[subject], **self.userinfo_extra})
        return answer(url, {"error": "not found"}, 404)

    def post(self, url, data=None, **kwargs):
        self.token_requests.append(dict(data or {}))
        grant = self.pending.pop((data or {}).get("code"), None)
        verifier = (data or {}).get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if grant is None or challenge != grant["code_challenge"] or data.get("client_secret") != CLIENT_SECRET:
            return answer(url, {"error": "invalid_grant"}, 400)
        claims = {"sub": grant["subject"], "nonce": grant["nonce"], **self.id_token_extra}
        return answer(url, {"id_token": self.id_token(claims), "access_token": f"access-{grant['subject']}"})


@pytest.fixture
def idp(settings, monkeypatch):
    """The fake provider, the console set up to use it, and requests answering for it."""
    fake = FakeProvider()
    settings.OIDC_ISSUER, settings.OIDC_CLIENT_ID, settings.OIDC_CLIENT_SECRET = ISSUER, CLIENT_ID, CLIENT_SECRET
    settings.OIDC_ROLE_MAP, settings.OIDC_ROLES_CLAIM = ROLE_MAP, "groups"
    monkeypatch.setattr(requests, "get", fake.get)
    monkeypatch.setattr(requests, "post", fake.post)
    provider.forget()
    yield fake
    provider.forget()


@pytest.fixture
def sso_sign_in(client, idp):
    """Signs `subject` in with SSO through the test client, as far as the console's answer to the callback."""

    def sign_in(subject, browser=None):
        browser = browser or client
        start = browser.get("/login/sso/")
        assert start.status_code == 302, start
        return browser.get(f"/login/sso/callback/?{idp.authorize(start['Location'], subject)}")

    return sign_in
