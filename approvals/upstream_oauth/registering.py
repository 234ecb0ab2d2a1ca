"""How the console makes itself known to a server's authorization server, in the MCP spec's order of
preference: credentials an admin entered (pre-registration), else its Client ID Metadata Document when the
server supports those and the console is reachable over https, else dynamic client registration (RFC 7591)."""

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction
from django.urls import reverse

from approvals.audit import chain
from approvals.upstream import UpstreamError
from approvals.upstream_oauth import server_tokens
from approvals.upstream_oauth.models import UpstreamClient

CLIENT_NAME = "MCP Approval Console"
GRANT_TYPES = ["authorization_code", "refresh_token"]
# Which token endpoint authentication a confidential client prefers, of those the server offers.
SECRET_METHODS = ["client_secret_basic", "client_secret_post"]


def preregister(server, client_id: str, client_secret: str = "", private_key: str = "") -> UpstreamClient:
    """Credentials the server's authorization server issued the console, as an admin entered them."""
    client, _ = UpstreamClient.objects.get_or_create(server=server)
    client.registration, client.client_id = UpstreamClient.Registration.PREREGISTERED, client_id
    client.client_secret, client.private_key = client_secret or None, private_key or None
    client.token_auth_method = "private_key_jwt" if private_key else ""
    client.save()
    return client


def signing_key_ok(pem: str) -> bool:
    """Whether `pem` is a private key the console can sign client assertions with."""
    return bool(server_tokens.signing_algorithm(pem))


def client_metadata_url(base_url: str) -> str:
    return settings.OAUTH_CLIENT_METADATA_URL or base_url + reverse("upstream_client_metadata")


def client_metadata_document(base_url: str) -> dict:
    """The console's Client ID Metadata Document: a public client (no secret), PKCE-bound to its callback."""
    return {
        "client_id": client_metadata_url(base_url),
        "client_name": CLIENT_NAME,
        "client_uri": base_url + "/",
        "redirect_uris": [base_url + reverse("upstream_oauth_callback")],
        "grant_types": GRANT_TYPES,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


def ensure_registered(client: UpstreamClient, redirect_uri: str, base_url: str, actor) -> None:
    server = client.server
    if client.registration == UpstreamClient.Registration.PREREGISTERED:
        client.token_auth_method = server_tokens.registration_auth_method(client)
        client.save(update_fields=["token_auth_method"])
        return
    document_url = client_metadata_url(base_url)
    if client.metadata.get("client_id_metadata_document_supported") is True and document_url.startswith("https://"):
        if (client.registration, client.client_id) != (UpstreamClient.Registration.CIMD, document_url):
            client.registration, client.client_id, client.client_secret = "cimd", document_url, None
            client.token_auth_method, client.redirect_uri = "none", redirect_uri
            with transaction.atomic():
                client.save()
                chain.record("upstream_oauth.registered", actor, server=server, data=registered(client))
        return
    if client.registration == UpstreamClient.Registration.DCR and client.redirect_uri == redirect_uri:
        return
    if not client.registration_endpoint:
        raise UpstreamError(
            "the authorization server offers neither Client ID Metadata Documents (over https) nor dynamic "
            "registration: enter the client ID (and secret) it issued you on the server's form"
        )
    offered = client.metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    wanted = next((method for method in [*SECRET_METHODS, "none"] if method in offered), "none")
    document = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": GRANT_TYPES,
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
    }
    answer = async_to_sync(_register)(client.registration_endpoint, document)
    secret = answer.get("client_secret")
    client.registration, client.client_id = UpstreamClient.Registration.DCR, answer["client_id"]
    client.client_secret = secret if isinstance(secret, str) and secret else None
    method = answer.get("token_endpoint_auth_method")
    client.token_auth_method = method if isinstance(method, str) and method else wanted
    if client.token_auth_method != "none" and not client.client_secret:
        client.token_auth_method = "none"
    client.redirect_uri = redirect_uri
    with transaction.atomic():
        client.save()
        chain.record("upstream_oauth.registered", actor, server=server, data=registered(client))


async def _register(endpoint: str, document: dict) -> dict:
    async with server_tokens.oauth_http() as http:
        return await http.register(endpoint, document)


def registered(client: UpstreamClient) -> dict:
    """What the audit log keeps of a registration: how, as whom, authenticating how; never the secret."""
    return {
        "registration": client.registration,
        "client_id": client.client_id,
        "token_auth_method": client.token_auth_method,
        "issuer": client.issuer,
    }
