"""Fetching Client ID Metadata Documents: django-oauth-toolkit's hardened fetcher (https, public addresses
only, pinned to the address it checked, no redirects, size and time caps, cached by the document's
Cache-Control), and a document on this machine itself while the console answers only loopback names
(OAUTH_LOOPBACK_DOCUMENTS), as a client under development serves it; its certificate checked either way.

A fetch starts only where a signed-in person's browser is sent to the authorization endpoint: the token
endpoint takes any page's form POST, and an image or a frame on any page may load the authorization URL."""

import ssl
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from django.urls import reverse
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from approvals.loopback import is_loopback_address

# What a browser says it loads (Sec-Fetch-Dest) when a person is sent to a page; absent from older browsers.
PAGE = ("document", "")


class ConsoleFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id):
        host = urlsplit(client_id).hostname or ""
        if not (is_loopback_address(host) and settings.OAUTH_LOOPBACK_DOCUMENTS):
            return super().fetch(client_id)
        parsed = cimd._validate_client_id_url(client_id)
        timeout = urllib3.Timeout(total=oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        # Checked against the system's authorities, and those SSL_CERT_FILE or SSL_CERT_DIR add (a development CA):
        # another process on this machine may hold a loopback port, and would otherwise be taken for the client.
        pool = urllib3.HTTPSConnectionPool(
            host, parsed.port or 443, timeout=timeout, retries=False, ssl_context=ssl.create_default_context()
        )
        try:
            path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            response = pool.urlopen("GET", path, redirect=False, preload_content=False)
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()


class SentToAuthorize:
    """django-oauth-toolkit's CIMD registration permission: a document is fetched only for a person's browser
    sent to the authorization endpoint, never for a token request or a page's image, frame or script."""

    def has_permission(self, request, client_id) -> bool:
        destination = request.headers.get("HTTP_SEC_FETCH_DEST", "")
        return (
            request.http_method == "GET"
            and urlsplit(request.uri).path == reverse("oauth2_provider:authorize")
            and destination in PAGE
        )
