"""Input requests as the queue shows them: the cards beside pending calls, and the form an operator answers in."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from approvals.forms.schema import build_form
from approvals.inputs import requests
from approvals.inputs.models import InputRequest

INPUT_CARD = "approvals/_input_request.html"


def shown_inputs():
    return InputRequest.objects.select_related("call__token", "call__tool", "server")


def queue_inputs():
    """What the queue shows beside pending calls: open requests, and refusals young enough to still matter."""
    recent = timezone.now() - timedelta(seconds=settings.INPUT_TIMEOUT_SECONDS)
    shown = Q(status=InputRequest.Status.PENDING) | Q(status=InputRequest.Status.REFUSED, created_at__gte=recent)
    return shown_inputs().filter(shown).order_by("created_at", "pk")


def answer_form(request: InputRequest, data=None):
    """The form of fields an elicitation's requestedSchema describes, its defaults filled in."""
    form = build_form(requests.requested_schema(request), data=data, prefix=f"input-{request.pk}")
    form.input_id = request.pk
    return form
