"""Tags for input-request cards; what an upstream server wrote leaves them unmarked, so autoescape applies."""

from django import template

from approvals.display import input_cards
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol.elicitation_requests import url_domain as domain_of

register = template.Library()

OUTCOMES = {
    InputRequest.Status.ANSWERED: "Accepted",
    InputRequest.Status.DECLINED: "Declined",
    InputRequest.Status.CANCELLED: "Cancelled",
    InputRequest.Status.EXPIRED: "Expired",
    InputRequest.Status.PASSED_THROUGH: "Answered by the client",
    InputRequest.Status.REFUSED: "Refused, and answered upstream as a decline",
}


@register.simple_tag
def queue_inputs():
    return list(input_cards.queue_inputs())


@register.simple_tag
def sampling_view(request):
    return input_cards.sampling_view(request)


@register.filter
def written_reply(request):
    """The text an operator sent back as the model's reply to a sampling request, if they did."""
    content = request.answer.get("content") if isinstance(request.answer, dict) else None
    return content.get("text") if request.method == requests.SAMPLE and isinstance(content, dict) else ""


@register.simple_tag
def input_form(request, bound=None):
    """The posted form when it belongs to this request (to show its errors), else a fresh one with the defaults."""
    if bound is not None and getattr(bound, "input_id", None) == request.pk:
        return bound
    return input_cards.answer_form(request)


@register.filter
def sent_content(request):
    """What the answer sent back upstream holds (a form's fields, a completion), when it holds anything."""
    content = request.answer.get("content") if isinstance(request.answer, dict) else None
    return content if content else None


# Where a sampling request's outcome reads otherwise than an elicitation's.
SAMPLING_OUTCOMES = {
    InputRequest.Status.ANSWERED: "Replied",
    InputRequest.Status.REFUSED: "Refused, and answered upstream as invalid",
}


register.filter("requested_schema", requests.requested_schema)


@register.filter
def url_domain(url):
    return domain_of(url) if isinstance(url, str) else ""


@register.filter
def input_outcome(request):
    sampled = SAMPLING_OUTCOMES if request.method == requests.SAMPLE else {}
    text = sampled.get(request.status) or OUTCOMES.get(request.status, request.get_status_display())
    if request.answered_by_name:
        text += f" by {request.answered_by_name}"
    action = request.answer.get("action") if isinstance(request.answer, dict) else None
    if request.status == InputRequest.Status.PASSED_THROUGH and action:
        text += f" ({action})"
    return f"{text}: {request.reason}" if request.reason else f"{text}."
