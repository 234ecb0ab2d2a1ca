"""Slack's way in: the interactivity endpoint the Slack app posts clicks to, and a person linking their Slack user.

The endpoint has no session and no CSRF token: Slack signs each request instead, and one whose signature or
timestamp does not hold is refused with 401 before anything is read from it.
"""

import json

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from approvals.slack import interactions, linking, signature, transport
from approvals.slack.models import SlackLink
from approvals.views.decorators import role_required


def plain(text: str, status: int) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")


@csrf_exempt
@require_POST
def slack_interactions(request):
    if not transport.configured():
        return plain("Slack approvals are not set up on this console.", 404)
    problem = signature.problem(
        settings.SLACK_SIGNING_SECRET,
        request.headers.get("X-Slack-Request-Timestamp", ""),
        request.body,
        request.headers.get("X-Slack-Signature", ""),
    )
    if problem:
        return plain(problem, 401)
    try:
        payload = json.loads(request.POST.get("payload", ""))
    except ValueError:
        return plain("The request carries no interaction payload.", 400)
    if not isinstance(payload, dict):
        return plain("The interaction payload is not a JSON object.", 400)
    base_url = settings.CONSOLE_URL or request.build_absolute_uri("/").rstrip("/")
    answer = interactions.handle(payload, base_url)
    return JsonResponse(answer) if answer else HttpResponse(status=200)


@role_required
def slack_link(request, note):
    """Shows whom the link names; the person's POST links that Slack user to them."""
    found = linking.read_note(note)
    if found is None:
        messages.error(request, "The Slack link is not the console's, or older than 15 minutes: click in Slack again.")
        return redirect("account")
    if request.method == "POST":
        linking.link(request.user, found["team"], found["user"], found["name"], SlackLink.How.ACCOUNT)
        messages.success(request, f"Slack user {found['name'] or found['user']} now decides as you in Slack.")
        return redirect("account")
    return render(request, "approvals/slack_link.html", {"slack": found})


@require_POST
@role_required
def slack_unlink(request, pk):
    if linking.unlink(request.user, pk):
        messages.success(request, "The Slack user no longer decides as you.")
    else:
        messages.warning(request, "No such Slack link of yours.")
    return redirect("account")
