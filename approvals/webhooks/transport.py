"""POSTing one webhook body: the only code that talks to endpoints, with one error type.

Bounded everywhere an endpoint could hold a worker: the whole attempt (resolving the name,
connecting, sending, the answer) by one deadline, the answer read up to a small size.
Redirects are answers, not instructions: a 3xx fails the attempt rather than sending the
event elsewhere. An endpoint is resolved at delivery and reached at the address checked, under
upstream/outbound's address policy with WEBHOOK_ALLOWED_HOSTS.
"""

import asyncio
import time
from dataclasses import dataclass

import httpx

from approvals.upstream.outbound import PinnedTransport, Refused, url_problem

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


class Transport:
    def __init__(self, timeout: float, max_response_bytes: int = MAX_RESPONSE_BYTES, allowed_hosts=()):
        self.timeout, self.max_response_bytes = timeout, max_response_bytes
        self.allowed_hosts = list(allowed_hosts)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST `body`; the answer when it is a 2xx, else WebhookError. Runs its own event loop, for its deadline."""
        problem = url_problem(url)
        if problem:
            raise WebhookError(problem)
        started = time.monotonic()
        try:
            return asyncio.run(self.attempt(url, body, headers, started))
        except Refused as exc:
            raise WebhookError(str(exc)) from None
        except TimeoutError:
            raise WebhookError(f"no answer within {self.timeout:g} seconds", elapsed_ms=ms_since(started)) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise WebhookError(f"{type(exc).__name__}: {exc}"[:500], elapsed_ms=ms_since(started)) from None

    async def attempt(self, url: str, body: bytes, headers: dict[str, str], started: float) -> Answer:
        pinned = PinnedTransport(self.allowed_hosts, "WEBHOOK_ALLOWED_HOSTS")
        async with asyncio.timeout(self.timeout):
            async with (
                httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, transport=pinned) as client,
                client.stream("POST", url, content=body, headers=headers) as response,
            ):
                read, kept = 0, b""
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if len(kept) < KEPT_BODY_BYTES:
                        kept += chunk[: KEPT_BODY_BYTES - len(kept)]
                    if read >= self.max_response_bytes:
                        break
        elapsed, body = ms_since(started), kept_text(kept)
        status = response.status_code
        if response.is_redirect:
            raise WebhookError(f"answered {status}, a redirect, which is not followed", status, elapsed, body)
        if not response.is_success:
            raise WebhookError(answered_text(status), status, elapsed, body)
        return Answer(status, elapsed, body)


def ms_since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
