"""Sending one notification to a push service: the only code that talks to them, with one error type.

pywebpush encrypts the payload for the browser (RFC 8291, aes128gcm) and py_vapid, its companion, signs the request
(RFC 8292); the POST itself (RFC 8030) goes through upstream/outbound's address policy like every URL someone else
chose: a subscription's endpoint comes from a browser, so it may not reach inside (WEB_PUSH_ALLOWED_HOSTS lists the
exceptions), and only https unless listed. Bounded by one deadline, redirects not followed, the answer read up to a
small size.
"""

import asyncio
from dataclasses import dataclass

import httpx
from pywebpush import WebPusher, WebPushException

from approvals.push import vapid
from approvals.upstream.outbound import PinnedTransport, Refused, tls_context, url_problem

MAX_RESPONSE_BYTES = 16 * 1024
# Gone for good: the browser unsubscribed, or the push service expired the subscription (RFC 8030, 7.3).
GONE = (404, 410)


class PushError(Exception):
    """A notification that did not reach the push service, or that it refused; `status` is its answer's code."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.message, self.status = message, status

    @property
    def gone(self) -> bool:
        return self.status in GONE


@dataclass
class Push:
    """One notification for one device: its subscription and the payload, before encryption."""

    subscription: dict
    payload: bytes
    # How long the push service may keep it for a device that is offline: a held call waits minutes, not days.
    ttl: int = 600


def encrypted(push: Push) -> tuple[bytes, dict[str, str]]:
    try:
        body = WebPusher(push.subscription).encode(push.payload, "aes128gcm")["body"]
    except (WebPushException, ValueError, TypeError) as exc:
        raise PushError(f"the subscription's keys cannot encrypt: {exc}") from None
    headers = {
        "authorization": vapid.authorization(push.subscription["endpoint"]),
        "content-encoding": "aes128gcm",
        "content-type": "application/octet-stream",
        "ttl": str(push.ttl),
        "urgency": "high",
    }
    return body, headers


class Transport:
    def __init__(self, timeout: float, allowed_hosts=()):
        self.timeout, self.allowed_hosts = timeout, list(allowed_hosts)

    def send_all(self, pushes: list[Push]) -> list[PushError | None]:
        """Each push sent at once, side by side, on one client; for each, None when the push service took it, else
        the error."""

        async def all_of():
            pinned = PinnedTransport(
                self.allowed_hosts, "WEB_PUSH_ALLOWED_HOSTS", https_only=True, verify=tls_context()
            )
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, transport=pinned) as client:
                return await asyncio.gather(*(self.outcome(client, push) for push in pushes))

        return asyncio.run(all_of())

    async def outcome(self, client: httpx.AsyncClient, push: Push) -> PushError | None:
        try:
            await self.send(client, push)
        except PushError as exc:
            return exc
        return None

    async def send(self, client: httpx.AsyncClient, push: Push):
        endpoint = push.subscription["endpoint"]
        problem = url_problem(endpoint)
        if problem:
            raise PushError(problem)
        body, headers = encrypted(push)
        try:
            async with (
                asyncio.timeout(self.timeout),
                client.stream("POST", endpoint, content=body, headers=headers) as response,
            ):
                read = 0
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
        except Refused as exc:
            raise PushError(str(exc)) from None
        except TimeoutError:
            raise PushError(f"no answer within {self.timeout:g} seconds") from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
            raise PushError(f"{type(exc).__name__}: {exc}"[:500]) from None
        if not response.is_success:
            raise PushError(f"the push service answered {response.status_code}", response.status_code)
