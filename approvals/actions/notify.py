"""Notifications to the devices of the people who may act on something that waits for a person: a held call, one
still missing places of its quorum, one escalated near its expiry, an input request for an operator.

announce() runs in the transaction of the change and only hands the work on once it commits (db/after_commit,
never on the committing thread: the call's path waits for nothing here); call_waits and input_waits then read the
rows, pick the devices and send (push/sending). Each payload names its own device in the page it opens, so that a
decision made there records that it came through a notification, and from which device.
"""

from django.contrib.auth.models import User
from django.db.models import Q, prefetch_related_objects
from django.urls import reverse

from approvals.calls import agent_tools, deciding
from approvals.calls.models import Call
from approvals.db import after_commit, batch_reads
from approvals.inputs.models import InputRequest
from approvals.push import sending, texts
from approvals.push.models import PushDevice

# A call's live events that ask for a person, and the title each notification has.
CALL_EVENTS = {
    "call.pending": "{kind} {id} waits for you",
    "call.approval": "{kind} {id} needs another approval",
    "call.escalated": "{kind} {id} expires soon",
}
# The query parameter a page opened by a notification carries, naming the device (views send it back).
MARKER = "push"
KINDS = {"permission": "Permission request", "resource": "Read", "prompt": "Prompt"}


def announce_call(call: Call, event: str):
    if event in CALL_EVENTS and anyone_notified():
        after_commit.soon("approvals.tasks.notify_call", call.pk, event)


def announce_input(request: InputRequest):
    if anyone_notified():
        after_commit.soon("approvals.tasks.notify_input", request.pk)


def anyone_notified() -> bool:
    # Once per batch of calls written together: where no device takes notifications, nothing is handed on.
    return batch_reads.once("push devices", PushDevice.objects.exists)


def deciders():
    """Active people who decide calls, by their role's permission or as superusers."""
    by_group = Q(groups__permissions__codename="decide_call", groups__permissions__content_type__app_label="approvals")
    by_user = Q(user_permissions__codename="decide_call", user_permissions__content_type__app_label="approvals")
    return User.objects.filter(is_active=True).filter(Q(is_superuser=True) | by_group | by_user).distinct()


def devices_of_deciders():
    return PushDevice.objects.filter(user__in=deciders()).select_related("user")


def call_waits(call_id, event: str) -> int:
    """Tell every device of those who may still decide the call what waits; how many notifications went out."""
    call = Call.objects.select_related("token", "tool", "server").filter(pk=call_id).first()
    if call is None or call.status != Call.Status.PENDING or event not in CALL_EVENTS:
        return 0
    # Separation of duties and the approvals already in keep some people from approving: they are not asked.
    prefetch_related_objects([call], "approvals")
    devices = [device for device in devices_of_deciders() if not deciding.approval_refusal(call, device.user)]
    kind = KINDS.get(call.kind, "Call")
    title = CALL_EVENTS[event].format(kind=kind, id=call.pk)
    if event == "call.approval":
        title += f" ({deciding.approvals_text(call).split(':')[0]})"
    body = f"{call.token.name}: {call.tool_name}"
    arguments = texts.arguments_text(call.final_arguments, agent_tools.input_schema(call))
    if arguments:
        body += f"\n{arguments}"
    path = reverse("call", args=[call.pk])
    notices = [(device, payload(title, body, path, f"call-{call.pk}", device)) for device in devices]
    return sending.send(notices)


def input_waits(input_id) -> int:
    """Tell the devices of those who may answer it that an input request waits for an operator."""
    request = InputRequest.objects.select_related("call__token").filter(pk=input_id).first()
    if request is None or request.status != InputRequest.Status.PENDING:
        return 0
    asked = "a sampling request" if request.method == "sampling/createMessage" else "input"
    title = f"Call {request.call_id} asks for {asked}"
    body = f"{request.call.token.name}: {request.call.tool_name}"
    if request.message:
        body += f"\n{texts.value_text(request.message)}"
    path = reverse("input", args=[request.pk])
    notices = [(device, payload(title, body, path, f"input-{request.pk}", device)) for device in devices_of_deciders()]
    return sending.send(notices)


def payload(title: str, body: str, path: str, tag: str, device: PushDevice) -> dict:
    """What the service worker shows (static/service-worker.js): the page it opens names the device."""
    return {"title": title, "body": body, "url": f"{path}?{MARKER}={device.pk}", "tag": tag}
