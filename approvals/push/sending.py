"""Notifications sent to devices, all at once, off the path of whatever they tell of (approvals.actions.notify runs
this after commit, in a celery worker or on this process's threads). A device its push service says is gone is
forgotten; any other failure is logged and dropped: a notification is a nudge, and the queue holds the call."""

import json
import logging

from django.conf import settings

from approvals.push import devices
from approvals.push.models import PushDevice
from approvals.push.transport import Push, Transport

log = logging.getLogger(__name__)


def send(notices: list[tuple[PushDevice, dict]]) -> int:
    """Each (device, payload) sent; how many push services took theirs."""
    if not notices:
        return 0
    transport = Transport(settings.WEB_PUSH_TIMEOUT_SECONDS, settings.WEB_PUSH_ALLOWED_HOSTS)
    pushes = [
        Push(device.subscription, json.dumps(payload, ensure_ascii=False).encode()) for device, payload in notices
    ]
    taken = []
    for (device, _), error in zip(notices, transport.send_all(pushes), strict=True):
        if error is None:
            taken.append(device.pk)
        elif error.gone:
            devices.forget_gone(device.pk, error.status)
        else:
            log.warning("a notification to device %s (%s) failed: %s", device.pk, device.label, error.message)
    devices.reached(taken)
    return len(taken)
