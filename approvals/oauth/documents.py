"""Fetching Client ID Metadata Documents: django-oauth-toolkit's hardened fetcher (https, public addresses
only, pinned to the address it checked, no redirects, size and time caps, cached by the document's
Cache-Control), and a document on this machine itself while the console answers only loopback names
(OAUTH_LOOPBACK_DOCUMENTS), as a client under development serves it."""

import warnings
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from approvals.loopback import is_loopback_address


class ConsoleFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id):
        host = urlsplit(client_id).hostname or ""
        if not (is_loopback_address(host) and settings.OAUTH_LOOPBACK_DOCUMENTS):
            return super().fetch(client_id)
        parsed = cimd._validate_client_id_url(client_id)
        timeout = urllib3.Timeout(total=oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        # A process on this machine could read a loopback connection anyway: its certificate proves nothing.
        pool = urllib3.HTTPSConnectionPool(
            host, parsed.port or 443, timeout=timeout, retries=False, cert_reqs="CERT_NONE"
        )
        try:
            path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                response = pool.urlopen("GET", path, redirect=False, preload_content=False)
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
