"""A person's devices that take notifications of waiting calls, from their account page: turned on (the page's
script subscribes the browser with the console's VAPID key and posts the subscription here), and removed."""

import json

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from approvals.push import devices
from approvals.roles import DECIDE_CALLS
from approvals.views.decorators import permission_or_403, role_required


@require_POST
@permission_or_403(DECIDE_CALLS)
def device_add(request):
    try:
        subscription = json.loads(request.POST.get("subscription", ""))
        device = devices.turn_on(
            request.user, subscription, request.POST.get("label", ""), request.headers.get("user-agent", "")
        )
    except (ValueError, devices.NotASubscription) as exc:
        why = str(exc) if isinstance(exc, devices.NotASubscription) else "the browser sent no subscription"
        messages.error(request, f"Notifications are not on: {why}.")
        return redirect("account")
    messages.success(request, f"Notifications are on for {device.label}: calls that wait for you show there.")
    return redirect("account")


@require_POST
@role_required
def device_remove(request, pk):
    if devices.remove(request.user, pk):
        messages.success(request, "The device is removed: it gets no more notifications.")
    else:
        messages.warning(request, "No such device of yours, or it was removed already.")
    return redirect("account")
