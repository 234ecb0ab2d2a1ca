"""Admins' changes to webhook endpoints, each one audit event in the same transaction; a secret is returned once."""

import base64
import logging
import secrets
import uuid

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.audit.snapshots import redacted, snapshot
from approvals.upstream.outbound import refused_at, url_problem
from approvals.webhooks import sending
from approvals.webhooks.models import EVENT_TYPES, WebhookAttempt, WebhookDelivery, WebhookEndpoint

log = logging.getLogger(__name__)
# How long saving an endpoint waits to learn the address its host resolves to.
RESOLVE_SECONDS = 2.0
EDITABLE = ("url", "description", "events", "slack", "enabled", "console_url")


class EndpointError(Exception):
    """`fields` holds each fault under the form field it is about ("" for the form as a whole)."""

    def __init__(self, fields: dict[str, list[str]]):
        self.fields = {name: errors for name, errors in fields.items() if errors}
        self.errors = [error for errors in self.fields.values() for error in errors]
        super().__init__("; ".join(self.errors))


def new_secret() -> str:
    """A Standard Webhooks secret: whsec_ and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def editable(endpoint: WebhookEndpoint) -> dict:
    return {field: getattr(endpoint, field) for field in EDITABLE}


def audited(endpoint: WebhookEndpoint) -> dict:
    """An endpoint as the audit log keeps it: a URL's path may be a credential (Slack's are)."""
    return snapshot(endpoint, EDITABLE, secrets=["url"])


def problems(fields: dict) -> dict[str, list[str]]:
    """Each field's faults, by its name; an endpoint may be saved when every list is empty."""
    errors = {name: [] for name in ("url", "console_url", "events")}
    for name in ("url", "console_url"):
        problem = url_problem(fields.get(name, ""))
        if problem:
            errors[name].append(problem)
    if len(fields.get("url", "")) > 2000:
        errors["url"].append("at most 2000 characters")
    if not errors["url"]:
        refused = refused_at(fields["url"], settings.WEBHOOK_ALLOWED_HOSTS, "WEBHOOK_ALLOWED_HOSTS", RESOLVE_SECONDS)
        if refused:
            errors["url"].append(f"delivery would refuse it: {refused}")
    unknown = [event for event in fields.get("events", []) if event not in EVENT_TYPES]
    if unknown:
        errors["events"].append(f"unknown events: {', '.join(unknown)}")
    if not fields.get("events"):
        errors["events"].append("choose at least one event")
    return errors


@transaction.atomic
def create_endpoint(fields: dict, user) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its secret, which is shown this once."""
    errors = problems(fields)
    if any(errors.values()):
        raise EndpointError(errors)
    endpoint = WebhookEndpoint.objects.create(**fields, secret=new_secret(), created_by=user)
    record("webhook.created", user, endpoint, None, audited(endpoint))
    return endpoint, endpoint.secret


@transaction.atomic
def change_endpoint(endpoint: WebhookEndpoint, fields: dict, user) -> bool:
    """Apply `fields` (of EDITABLE); False when nothing changed."""
    if not set(fields) <= set(EDITABLE):
        raise ValueError(f"only {', '.join(EDITABLE)} can be changed")
    errors = problems({**editable(endpoint), **fields})
    if any(errors.values()):
        raise EndpointError(errors)
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    if {**editable(endpoint), **fields} == editable(endpoint):
        return False
    before = audited(endpoint)
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(**fields)
    for field, value in fields.items():
        setattr(endpoint, field, value)
    record("webhook.changed", user, endpoint, before, audited(endpoint))
    return True


@transaction.atomic
def rotate_secret(endpoint: WebhookEndpoint, user) -> str:
    """A new secret, shown once; deliveries from now on are signed with it."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    endpoint.secret, endpoint.secret_rotated_at = new_secret(), timezone.now()
    endpoint.save(update_fields=["secret", "secret_rotated_at"])
    record("webhook.rotated", user, endpoint, None, None, secret="replaced")
    return endpoint.secret


@transaction.atomic
def delete_endpoint(endpoint: WebhookEndpoint, user):
    record("webhook.deleted", user, endpoint, audited(endpoint), None)
    endpoint.delete()


@transaction.atomic
def redeliver(delivery: WebhookDelivery, user) -> bool:
    """One more attempt at a delivery now, whatever became of it, off this request; False when no sender took it.

    Handed over first and audited after, so the log never claims a redelivery that was never sent.
    """
    try:
        sending.schedule(delivery.pk, 0.0, requested_by=user.get_username())
    except Exception:
        log.exception("the broker did not take a redelivery of webhook delivery %s", delivery.pk)
        return False
    record(
        "webhook.redelivered",
        user,
        delivery.endpoint,
        None,
        None,
        delivery={"id": delivery.pk, "message_id": delivery.message_id, "event": delivery.event_type},
    )
    return True


TEST_EVENT = "webhook.test"
# An endpoint whose last attempts, this many or all it had, failed is failing.
FAILING_AFTER = 3


def health(endpoint: WebhookEndpoint) -> str:
    """ "failing" when its last attempts all failed, "ok" when the last went through, "unused" before any."""
    last = WebhookAttempt.objects.filter(delivery__endpoint=endpoint).order_by("-at", "-id")
    errors = list(last.values_list("error", flat=True)[:FAILING_AFTER])
    if not errors:
        return "unused"
    return "failing" if all(errors) else "ok"


@transaction.atomic
def send_test(endpoint: WebhookEndpoint, user) -> WebhookDelivery:
    """A test event to this endpoint alone, whatever events it chose, sent off this request; audited."""
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        message_id=f"msg_{uuid.uuid4().hex}",
        event_type=TEST_EVENT,
        payload={
            "type": TEST_EVENT,
            "timestamp": now.isoformat(),
            "data": {
                "message": f"A test event from the console, sent by {user.get_username()}.",
                "url": endpoint.console_url.rstrip("/") + reverse("webhook", args=[endpoint.pk]),
            },
        },
        created_at=now,
        next_attempt_at=now,
    )
    record(
        "webhook.tested", user, endpoint, None, None, delivery={"id": delivery.pk, "message_id": delivery.message_id}
    )
    transaction.on_commit(lambda: sending.send_soon([delivery.pk]), robust=True)
    return delivery


def record(action, user, endpoint, before, after, **extra):
    data = {"endpoint_id": endpoint.pk, "url": redacted(endpoint.url), **extra}
    if before is not None or after is not None:
        data |= {"before": before, "after": after}
    chain.record(action, Actor.user(user), data=data)
