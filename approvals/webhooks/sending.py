"""Sending deliveries: each attempt signed per Standard Webhooks, recorded, and retried with growing delays.

With a celery worker each attempt is a task, a retry one sent with a countdown. Where
tasks run inline (embedded), an inline task would run inside the request that made the
event, so attempts run on a few threads of this process instead (Sender): a slow
endpoint never holds a call. A delivery whose attempt is lost with its process (or its
task) stays due in the database, and send_due, on the periodic schedule, sends it again.
"""

import heapq
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone
from standardwebhooks import Webhook

from approvals.observe import metrics
from approvals.webhooks import bodies
from approvals.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from approvals.webhooks.transport import Transport, WebhookError

log = logging.getLogger(__name__)

# No retry waits longer than this, however many came before.
LONGEST_RETRY_SECONDS = 3600
# Each retry waits this many times longer than the one before.
BACKOFF_FACTOR = 4
# How long deliveries are kept once nothing more will be tried.
KEEP_DAYS = 30
USER_AGENT = "mcp-approval-console-webhooks"
# How much of a body sent is kept with its attempt: the event is kept whole in its delivery anyway.
KEPT_REQUEST_CHARS = 16 * 1024


def send_soon(delivery_ids):
    for delivery_id in delivery_ids:
        schedule(delivery_id, 0.0)


def schedule(delivery_id: int, delay: float, requested_by: str = ""):
    """An attempt at the delivery in `delay` seconds, by celery or by this process's Sender."""
    if current_app.conf.task_always_eager:
        sender().submit(delivery_id, delay, requested_by)
    else:
        # No retries on a broker that does not answer: this may run on a call's request, and send_due sends it later.
        current_app.send_task(
            "approvals.tasks.deliver_webhook", args=[delivery_id, requested_by], countdown=delay, retry=False
        )


def retry_delay(attempt: int) -> float:
    """How long after failed attempt number `attempt` the next one is due."""
    return min(settings.WEBHOOK_RETRY_SECONDS * BACKOFF_FACTOR ** (attempt - 1), LONGEST_RETRY_SECONDS)


def deliver(delivery_id: int, requested_by: str = "") -> WebhookAttempt | None:
    """One attempt, if the delivery is due (or an admin asked for it, `requested_by`); None when none was made."""
    claimed = claim(delivery_id, requested_by)
    if claimed is None:
        return None
    delivery, number = claimed
    endpoint = delivery.endpoint
    text = ""
    try:
        text = bodies.body(delivery.payload, endpoint.slack)
        answer = Transport(settings.WEBHOOK_TIMEOUT_SECONDS, allowed_hosts=settings.WEBHOOK_ALLOWED_HOSTS).post(
            endpoint.url, text.encode(), signed_headers(endpoint.secret, delivery.message_id, text)
        )
        exchange = Exchange(answer.status, answer.elapsed_ms, "", text, answer.body)
    except WebhookError as failure:
        exchange = Exchange(failure.status, failure.elapsed_ms, failure.message, text, failure.body)
    except Exception as exc:
        # Recorded as a failed attempt like any other, so that the retries run out rather than repeat unseen.
        log.exception("webhook delivery %s failed in the console", delivery_id)
        exchange = Exchange(None, None, f"the console could not send it: {type(exc).__name__}", text, "")
    return record(delivery, number, exchange, requested_by)


@dataclass
class Exchange:
    """One attempt as it went: the answer's status and time, or the error; the bodies both ways."""

    status: int | None
    elapsed_ms: float | None
    error: str
    sent: str
    answered: str


def signed_headers(secret: str, message_id: str, text: str) -> dict[str, str]:
    # Signed anew for each attempt: receivers refuse a timestamp older than a few minutes.
    now = datetime.now(UTC)
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, now, text),
    }


@transaction.atomic
def claim(delivery_id: int, requested_by: str) -> tuple[WebhookDelivery, int] | None:
    """Number the attempt; an automatic one only when due, and then it moves the next one out of reach meanwhile.

    Of a retry and the sweep finding the same delivery due, one attempts and the other finds it claimed. Should
    this process stop during the attempt, the delivery is due again once the attempt could no longer be running.
    """
    delivery = (
        WebhookDelivery.objects.select_for_update(of=("self",))
        .select_related("endpoint")
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None:
        return None
    now = timezone.now()
    if not requested_by:
        # A timer may fire a little before the database's clock says the attempt is due.
        due = delivery.next_attempt_at is not None and delivery.next_attempt_at <= now + timedelta(seconds=1)
        if delivery.delivered_at is not None or not due or not delivery.endpoint.enabled:
            return None
        delivery.next_attempt_at = now + timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT_SECONDS + 30)
    delivery.attempts += 1
    delivery.save(update_fields=["attempts", "next_attempt_at"])
    return delivery, delivery.attempts


@transaction.atomic
def record(delivery, number, exchange: Exchange, requested_by) -> WebhookAttempt:
    """Keep the attempt; when it failed, the next one is due after a delay growing with each attempt."""
    now, error = timezone.now(), exchange.error
    attempt = WebhookAttempt.objects.create(
        delivery=delivery,
        number=number,
        at=now,
        status_code=exchange.status,
        response_ms=exchange.elapsed_ms,
        error=error,
        requested_by=requested_by,
        request_body=exchange.sent[:KEPT_REQUEST_CHARS],
        response_body=exchange.answered,
    )
    changes, delay = {}, None
    if not error:
        changes = {"delivered_at": now, "next_attempt_at": None}
    elif not requested_by:
        # A redelivery that fails leaves the retries where they were.
        delay = retry_delay(number) if number < settings.WEBHOOK_ATTEMPTS else None
        changes = {"next_attempt_at": now + timedelta(seconds=delay) if delay is not None else None}
    if changes:
        WebhookDelivery.objects.filter(pk=delivery.pk).update(**changes)
    metrics.webhook_attempted("delivered" if not error else "retrying" if delay is not None else "failed")
    if delay is not None:
        transaction.on_commit(lambda: schedule(delivery.pk, delay), robust=True)
    return attempt


def send_due() -> int:
    """Send the deliveries due and not under way (their attempt lost); drop those long finished or whose endpoint
    is gone.

    A disabled endpoint's deliveries wait, and go out once it is enabled again.
    """
    now = timezone.now()
    due = list(
        WebhookDelivery.objects.filter(next_attempt_at__lte=now, delivered_at__isnull=True, endpoint__enabled=True)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:500]
    )
    send_soon(due)
    finished = WebhookDelivery.objects.filter(created_at__lt=now - timedelta(days=KEEP_DAYS), next_attempt_at=None)
    finished.delete()
    WebhookDelivery.objects.exclude(endpoint_id__in=WebhookEndpoint.objects.values("pk")).delete()
    return len(due)


class Sender:
    """This process's deliveries when tasks run inline: each run on a small pool of threads once it is due."""

    WORKERS = 4

    def __init__(self):
        self.due: list[tuple[float, int, int, str]] = []
        self.order = itertools.count()
        self.changed = threading.Condition()
        self.pool = ThreadPoolExecutor(self.WORKERS, thread_name_prefix="webhooks")
        threading.Thread(target=self.hand_out, name="webhooks-timer", daemon=True).start()

    def submit(self, delivery_id: int, delay: float, requested_by: str):
        with self.changed:
            heapq.heappush(self.due, (time.monotonic() + delay, next(self.order), delivery_id, requested_by))
            self.changed.notify()

    def hand_out(self):
        while True:
            with self.changed:
                while not self.due or self.due[0][0] > time.monotonic():
                    self.changed.wait(self.due[0][0] - time.monotonic() if self.due else None)
                _, _, delivery_id, requested_by = heapq.heappop(self.due)
            self.pool.submit(run_attempt, delivery_id, requested_by)


def run_attempt(delivery_id: int, requested_by: str):
    # A thread of the pool may hold a connection the database has since closed.
    close_old_connections()
    try:
        deliver(delivery_id, requested_by)
    except Exception:
        log.exception("webhook delivery %s could not be attempted", delivery_id)
    finally:
        close_old_connections()


_SENDER: Sender | None = None
_SENDER_MADE = threading.Lock()


def sender() -> Sender:
    global _SENDER
    with _SENDER_MADE:
        if _SENDER is None:
            _SENDER = Sender()
        return _SENDER
