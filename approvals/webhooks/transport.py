"""POSTing one webhook body: the only code that talks to endpoints, with one error type.

Bounded everywhere an endpoint could hold a worker: each network wait and the whole
exchange by the timeout, the answer read up to a small size. Redirects are answers,
not instructions: a 3xx fails the attempt rather than sending the event elsewhere.
"""

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

MAX_RESPONSE_BYTES = 64 * 1024
# How much of an answer's body is kept for the delivery's page.
KEPT_BODY_BYTES = 4096


def answered_text(status: int) -> str:
    return f"answered {status}"


class WebhookError(Exception):
    """An attempt that failed: no answer, or one that is not a 2xx. `status` is the answer's code, if any."""

    def __init__(self, message: str, status: int | None = None, elapsed_ms: float | None = None, body: str = ""):
        super().__init__(message)
        self.message, self.status, self.elapsed_ms, self.body = message, status, elapsed_ms, body


@dataclass
class Answer:
    status: int
    elapsed_ms: float
    body: str = ""


def kept_text(data: bytes) -> str:
    """The start of a body as text, for a person to read: at most KEPT_BODY_BYTES, undecodable bytes replaced."""
    return data[:KEPT_BODY_BYTES].decode("utf-8", errors="replace")


def url_problem(url: str) -> str:
    """Why a URL cannot be an endpoint, or ""."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        return "the URL cannot be read"
    if parts.scheme not in ("http", "https"):
        return "only http and https URLs are allowed"
    if not parts.hostname:
        return "the URL names no host"
    if parts.username or parts.password:
        return "the URL may not carry a user name or password"
    return ""


class Transport:
    def __init__(self, timeout: float, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.timeout, self.max_response_bytes = timeout, max_response_bytes

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST `body`; the answer when it is a 2xx, else WebhookError."""
        problem = url_problem(url)
        if problem:
            raise WebhookError(problem)
        started = time.monotonic()
        deadline = started + self.timeout
        try:
            with (
                httpx.Client(timeout=self.timeout, follow_redirects=False) as client,
                client.stream("POST", url, content=body, headers=headers) as response,
            ):
                read, kept = 0, b""
                for chunk in response.iter_raw():
                    read += len(chunk)
                    if len(kept) < KEPT_BODY_BYTES:
                        kept += chunk[: KEPT_BODY_BYTES - len(kept)]
                    if read >= self.max_response_bytes or time.monotonic() > deadline:
                        break
        except httpx.TimeoutException:
            raise WebhookError(f"no answer within {self.timeout:g} seconds", elapsed_ms=ms_since(started)) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise WebhookError(f"{type(exc).__name__}: {exc}"[:500], elapsed_ms=ms_since(started)) from None
        elapsed, body = ms_since(started), kept_text(kept)
        status = response.status_code
        if response.is_redirect:
            raise WebhookError(f"answered {status}, a redirect, which is not followed", status, elapsed, body)
        if not response.is_success:
            raise WebhookError(answered_text(status), status, elapsed, body)
        return Answer(status, elapsed, body)


def ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
