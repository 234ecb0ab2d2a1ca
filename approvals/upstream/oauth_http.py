"""The console's HTTP toward upstream authorization servers: discovery, registration and the token endpoint.

httpx, no Django; every failure is an UpstreamError (AuthorizationRequired when the authorization server
refuses the grant itself, so that only a person can mend it). Every wait is bounded by the caller's timeout,
every answer by MAX_METADATA_BYTES, and redirects are never followed. Every request goes through outbound's
address policy (https only, no address inside unless its host is allowed), connected to the address checked:
an authorization server's metadata names the endpoints, and the console sends its secrets there.
"""

import asyncio
import base64
import json
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx
import jwt

from approvals.protocol import oauth_discovery as discovery
from approvals.protocol.oauth_discovery import DiscoveryError

from .errors import AuthorizationRequired, UpstreamError
from .outbound import PinnedTransport, Refused, checked

MAX_METADATA_BYTES = 256 * 1024
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# The grant errors that no retry mends: the refresh token or the client is no longer accepted.
REFUSALS = {"invalid_grant", "invalid_client", "unauthorized_client", "access_denied", "invalid_scope"}
ASSERTION_SECONDS = 300


@dataclass
class Discovered:
    """What discovery found of one MCP server's authorization."""

    resource: str  # the canonical resource URI (RFC 8707)
    resource_metadata_url: str = ""
    scopes_supported: list | None = None
    issuer: str = ""
    metadata: dict = field(default_factory=dict)  # the authorization server's, or the legacy defaults
    legacy: bool = False  # a 2025-03-26 server: no protected resource metadata

    def endpoint(self, name: str) -> str:
        value = self.metadata.get(name)
        return value if isinstance(value, str) else ""


@dataclass
class Client:
    """The console's registration at one authorization server, and how it authenticates at the token endpoint."""

    client_id: str
    auth_method: str = "none"  # client_secret_basic, client_secret_post, none, private_key_jwt
    client_secret: str = ""
    private_key: str = ""  # PEM
    signing_algorithm: str = ""
    audience: str = ""  # the issuer, for private_key_jwt's aud


@dataclass(frozen=True)
class Answer:
    """An authorization server's answer, read whole."""

    status_code: int
    body: bytes


@dataclass
class Tokens:
    access_token: str
    expires_in: int | None
    refresh_token: str = ""
    scope: str | None = None  # None: the server did not say, which means what was asked for (RFC 6749 5.1)


ALLOWED_HOSTS_SETTING = "UPSTREAM_ALLOWED_HOSTS"
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint")


class OAuthHttp:
    """`allowed_hosts` are those that may be inside and use plain http; a `transport` other than a PinnedTransport
    replaces the address policy (tests' scripted servers)."""

    def __init__(self, timeout: float, transport: httpx.AsyncBaseTransport | None = None, allowed_hosts=()):
        self.timeout = timeout
        transport = transport or PinnedTransport(allowed_hosts, ALLOWED_HOSTS_SETTING, https_only=True)
        self._pinned = transport if isinstance(transport, PinnedTransport) else None
        self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False, transport=transport)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self._client.aclose()

    async def _send(self, request: httpx.Request) -> Answer:
        """The answer to `request`, the whole of it within the timeout and MAX_METADATA_BYTES: a bound on each read
        alone would let a server trickling its answer hold a Connect, or outlast a token renewal's claim, and one
        sending without end would fill the memory before a size were checked."""
        url = str(request.url)
        try:
            async with asyncio.timeout(self.timeout):
                response = await self._client.send(request, stream=True)
                try:
                    body = bytearray()
                    # Decoded bytes are counted: a compressed answer is bounded by what it inflates to.
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_METADATA_BYTES:
                            raise UpstreamError(f"{url} answered with more than {MAX_METADATA_BYTES} bytes")
                finally:
                    await response.aclose()
        except Refused as exc:
            raise UpstreamError(f"refused to reach {url}: {exc}") from None
        except TimeoutError:
            raise UpstreamError(f"{url}: no answer within {self.timeout:g}s", retryable=True) from None
        except httpx.HTTPError as exc:
            raise _transport_error(url, exc, self.timeout) from None
        return Answer(response.status_code, bytes(body))

    async def get_json(self, url: str) -> dict | None:
        """The JSON object at `url`; None when the server has none there (any 4xx)."""
        response = await self._send(self._client.build_request("GET", url, headers={"Accept": "application/json"}))
        if 400 <= response.status_code < 500:
            return None
        if response.status_code != 200:
            raise UpstreamError(f"{url} answered HTTP {response.status_code}", retryable=response.status_code >= 500)
        return _json_object(response, url)

    async def discover(self, server_url: str, challenge: dict) -> Discovered:
        """RFC 9728 then RFC 8414/OpenID discovery, in the spec's order; the 2025-03-26 fallbacks after. Every
        endpoint found must be one the console may reach (the authorization endpoint too, though only a browser
        goes there), so that a Connect fails before anything is sent rather than after the person consented."""
        found = await self._discovered(server_url, challenge)
        for name in ENDPOINTS:
            if found.endpoint(name):
                await self.reachable(found.endpoint(name))
        return found

    async def reachable(self, url: str) -> None:
        """UpstreamError unless the address policy lets the console reach `url` (a replaced transport: any)."""
        if self._pinned is None:
            return
        try:
            await checked(url, self._pinned.allowed_hosts, ALLOWED_HOSTS_SETTING, https_only=True)
        except Refused as exc:
            raise UpstreamError(f"refused to reach {url}: {exc}") from None

    async def _discovered(self, server_url: str, challenge: dict) -> Discovered:
        found = None
        for url in discovery.resource_metadata_urls(server_url, challenge.get("resource_metadata", "")):
            found = await self.get_json(url)
            if found is not None:
                return await self._from_resource_metadata(server_url, url, found)
        # A 2025-03-26 server: its origin is its authorization server, and without metadata the defaults hold.
        base = discovery.origin(server_url)
        result = Discovered(resource=discovery.canonical_resource(server_url), legacy=True)
        for url in discovery.authorization_server_metadata_urls(base):
            metadata = await self.get_json(url)
            if metadata is not None:
                result.metadata = _checked(metadata, url, legacy=True)
                result.issuer = result.metadata["issuer"]
                return result
        # No issuer is known, so none can be checked (RFC 9207) or named as a client assertion's audience.
        result.metadata = discovery.legacy_endpoints(server_url)
        return result

    async def _from_resource_metadata(self, server_url: str, url: str, prm: dict) -> Discovered:
        try:
            resource = discovery.check_resource(prm.get("resource"), server_url)
        except DiscoveryError as exc:
            raise UpstreamError(f"{url}: {exc}") from None
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise UpstreamError(f"{url}: the protected resource metadata names no authorization server")
        scopes = prm.get("scopes_supported")
        result = Discovered(resource, url, scopes if isinstance(scopes, list) else None, issuer=servers[0])
        for candidate in discovery.authorization_server_metadata_urls(servers[0]):
            metadata = await self.get_json(candidate)
            if metadata is not None:
                result.metadata = _checked(metadata, candidate)
                result.issuer = result.metadata["issuer"]
                return result
        raise UpstreamError(f"the authorization server {servers[0]} publishes no metadata")

    async def register(self, endpoint: str, document: dict) -> dict:
        """Dynamic client registration (RFC 7591): the server's answer, holding at least a client_id."""
        response = await self._send(
            self._client.build_request("POST", endpoint, json=document, headers={"Accept": "application/json"})
        )
        answer = _json_object(response, endpoint, allow_error=True)
        if response.status_code not in (200, 201) or not isinstance(answer.get("client_id"), str):
            raise UpstreamError(f"registration at {endpoint} failed: {_oauth_error(response, answer)}")
        return answer

    async def token(self, endpoint: str, client: Client, form: dict[str, str]) -> Tokens:
        """One token request, the client authenticated as it registered; the tokens, or why not."""
        headers = {"Accept": "application/json"}
        form = {key: value for key, value in form.items() if value}
        if client.auth_method == "client_secret_basic":
            # RFC 6749 2.3.1: each part form-encoded before Basic joins them.
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            # Named in the body too, as the SDK's client does: the SDK's authorization server looks the client up
            # by the body's client_id before it reads the header, and refuses a request without one.
            form["client_id"] = client.client_id
        elif client.auth_method == "client_secret_post":
            form |= {"client_id": client.client_id, "client_secret": client.client_secret}
        elif client.auth_method == "private_key_jwt":
            form |= {"client_assertion_type": JWT_BEARER_ASSERTION, "client_assertion": assertion(client, endpoint)}
        else:
            form["client_id"] = client.client_id
        response = await self._send(self._client.build_request("POST", endpoint, data=form, headers=headers))
        answer = _json_object(response, endpoint, allow_error=True)
        if response.status_code != 200:
            message = f"the token endpoint refused: {_oauth_error(response, answer)}"
            if answer.get("error") in REFUSALS:
                raise AuthorizationRequired(message, status=response.status_code)
            raise UpstreamError(message, retryable=response.status_code >= 500)
        return _tokens(answer, endpoint)


def assertion(client: Client, endpoint: str) -> str:
    """An RFC 7523 client assertion: the client's own signed statement that it is itself, for this server."""
    now = int(time.time())
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": client.audience or endpoint,
        "iat": now,
        "exp": now + ASSERTION_SECONDS,
        "jti": str(uuid.uuid4()),
    }
    try:
        return jwt.encode(claims, client.private_key, algorithm=client.signing_algorithm or "RS256")
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise UpstreamError(f"the private key cannot sign a client assertion: {exc}") from None


def _checked(metadata: dict, url: str, *, legacy: bool = False) -> dict:
    try:
        return discovery.check_server_metadata(metadata, url, legacy=legacy)
    except DiscoveryError as exc:
        raise UpstreamError(str(exc)) from None


def _json_object(response: Answer, url: str, *, allow_error: bool = False) -> dict:
    try:
        value = json.loads(response.body)
    except ValueError:
        if allow_error and response.status_code != 200:
            return {}
        raise UpstreamError(f"{url} answered HTTP {response.status_code} with something that is not JSON") from None
    if not isinstance(value, dict):
        if allow_error and response.status_code != 200:
            return {}
        raise UpstreamError(f"{url} answered with JSON that is not an object")
    return value


def _oauth_error(response: Answer, answer: dict) -> str:
    error = answer.get("error")
    if not isinstance(error, str):
        return f"HTTP {response.status_code}"
    description = answer.get("error_description")
    return f"{error}: {description}" if isinstance(description, str) and description else error


def _tokens(answer: dict, endpoint: str) -> Tokens:
    access, kind = answer.get("access_token"), answer.get("token_type")
    if not isinstance(access, str) or not access:
        raise UpstreamError(f"{endpoint} answered without an access_token")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise UpstreamError(f"{endpoint} issued a token of type {kind!r}, not Bearer")
    expires = answer.get("expires_in")
    refresh, scope = answer.get("refresh_token"), answer.get("scope")
    return Tokens(
        access_token=access,
        expires_in=int(expires) if isinstance(expires, int | float) and expires > 0 else None,
        refresh_token=refresh if isinstance(refresh, str) else "",
        scope=scope if isinstance(scope, str) else None,
    )


def _transport_error(url: str, exc: httpx.HTTPError, timeout: float) -> UpstreamError:
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamError(f"{url}: no answer within {timeout:g}s", retryable=True)
    return UpstreamError(f"cannot reach {url}: {type(exc).__name__}: {exc}", retryable=True)
