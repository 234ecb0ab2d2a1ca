"""What of a URL may be written down: the values of the query parameters that are credentials in flight (an OAuth
authorization response's code and state, the console's own callbacks' and its upstream's alike, and tokens and
secrets should a client put them there) are replaced, in the access log and in traces alike."""

import re

SECRET_PARAMETERS = ("code", "state", "access_token", "id_token", "refresh_token", "client_secret", "code_verifier")
REDACTED = "[redacted]"
_SECRET = re.compile(r"(?:(?<=[?&;])|^)(" + "|".join(SECRET_PARAMETERS) + r")=[^&;#\s]*", re.IGNORECASE)
# The span attributes of the HTTP semantic conventions, old and new, that hold a request's query.
URL_ATTRIBUTES = ("http.url", "http.target", "url.full", "url.query")


def redacted(text: str) -> str:
    """A URL, a request line ("GET /path?query") or a bare query string, with the secret parameters' values replaced."""
    return _SECRET.sub(lambda found: f"{found[1]}={REDACTED}", text)


def redact_span(span, *_request) -> None:
    """An OpenTelemetry request hook: the span's URL attributes redacted once the instrumentation has set them."""
    if not span.is_recording():
        return
    attributes = getattr(span, "attributes", None) or {}
    for name in URL_ATTRIBUTES:
        value = attributes.get(name)
        if isinstance(value, str):
            span.set_attribute(name, redacted(value))
