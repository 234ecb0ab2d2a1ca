"""A person's devices that take notifications: turned on (a browser's subscription kept), listed, removed; each
change audited. A device that its push service says is gone is forgotten, audited as the system's doing."""

from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from approvals.audit import chain
from approvals.audit.chain import SYSTEM, Actor
from approvals.push.models import PushDevice
from approvals.push.vapid import b64decode
from approvals.upstream.outbound import url_problem

MAX_LABEL = 100
MAX_USER_AGENT = 300
MAX_ENDPOINT = 2000


class NotASubscription(ValueError):
    """What a browser sent is not a Push API subscription the console can encrypt to; the message says why."""


def checked(subscription) -> tuple[str, str, str]:
    """(endpoint, p256dh, auth) of a PushSubscription's JSON, or NotASubscription."""
    if not isinstance(subscription, dict):
        raise NotASubscription("the subscription must be a JSON object with endpoint and keys")
    endpoint, keys = subscription.get("endpoint"), subscription.get("keys")
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > MAX_ENDPOINT:
        raise NotASubscription(f"the subscription's endpoint must be a URL of at most {MAX_ENDPOINT} characters")
    problem = url_problem(endpoint)
    if problem:
        raise NotASubscription(f"the subscription's endpoint: {problem}")
    if not isinstance(keys, dict) or not all(isinstance(keys.get(name), str) for name in ("p256dh", "auth")):
        raise NotASubscription("the subscription's keys must hold p256dh and auth")
    point, secret = b64decode(keys["p256dh"]), b64decode(keys["auth"])
    # RFC 8291: an uncompressed P-256 point, and a 16-byte authentication secret.
    if point is None or len(point) != 65 or point[0] != 4:
        raise NotASubscription("the subscription's p256dh key is not an uncompressed P-256 point")
    if secret is None or len(secret) != 16:
        raise NotASubscription("the subscription's auth secret is not 16 bytes")
    return endpoint, keys["p256dh"], keys["auth"]


@transaction.atomic
def turn_on(user, subscription, label: str, user_agent: str = "") -> PushDevice:
    """Keep the browser's subscription as a device of `user`; a browser subscribed before is theirs from now on."""
    endpoint, p256dh, auth = checked(subscription)
    label = label.strip()[:MAX_LABEL] or "a browser"
    device, _ = PushDevice.objects.update_or_create(
        endpoint=endpoint,
        defaults={
            "user": user,
            "p256dh": p256dh,
            "auth": auth,
            "label": label,
            "user_agent": user_agent[:MAX_USER_AGENT],
            "created_at": timezone.now(),
            "last_used_at": None,
        },
    )
    chain.record("push.device_added", Actor.user(user), data=described(device))
    return device


@transaction.atomic
def remove(user, device_id) -> bool:
    """Forget one of the user's own devices; False when it is not theirs."""
    device = PushDevice.objects.filter(pk=device_id, user=user).first()
    if device is None:
        return False
    data = described(device)
    device.delete()
    chain.record("push.device_removed", Actor.user(user), data=data)
    return True


@transaction.atomic
def forget_gone(device_id, status: int) -> None:
    """Its push service answered 404 or 410: the subscription is over, and nothing will reach it again."""
    device = PushDevice.objects.filter(pk=device_id).select_related("user").first()
    if device is not None:
        data = described(device)
        device.delete()
        chain.record("push.device_forgotten", SYSTEM, data={**data, "status": status})


def devices_of(user):
    return PushDevice.objects.filter(user=user)


def label_of(user, device_id) -> str | None:
    """The label of the user's own device `device_id` (what a page a notification opened sends back), else None."""
    if not str(device_id or "").isdigit():
        return None
    return PushDevice.objects.filter(pk=int(device_id), user=user).values_list("label", flat=True).first()


def reached(device_ids) -> None:
    PushDevice.objects.filter(pk__in=device_ids).update(last_used_at=timezone.now())


def described(device: PushDevice) -> dict:
    # The push service's host only: the rest of the endpoint is a capability to push to the browser.
    host = urlsplit(device.endpoint).hostname or ""
    return {"device_id": device.pk, "label": device.label, "user": device.user.get_username(), "push_service": host}
