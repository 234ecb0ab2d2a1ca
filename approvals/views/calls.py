"""Recent calls, one call's page, and the media of its result."""

from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render

from approvals.actions import notify
from approvals.calls.models import Call
from approvals.display import results, rows
from approvals.push import devices
from approvals.roles import VIEW_CALLS
from approvals.views.decorators import live_page, permission_or_403


@permission_or_403(VIEW_CALLS)
@live_page
def recent(request):
    statuses = rows.chosen_statuses(request.GET.getlist("status"))
    return render(
        request,
        "approvals/recent.html",
        {
            "calls": rows.recent_calls(statuses),
            "statuses": statuses,
            "choices": Call.Status.choices,
            "limit": rows.RECENT_LIMIT,
            "live_query": urlencode({"view": "recent", "status": statuses}, doseq=True),
        },
    )


@permission_or_403(VIEW_CALLS)
@live_page
def detail(request, pk):
    call = get_object_or_404(rows.shown_calls(), pk=pk)
    live = {"view": "call", "id": pk}
    # Opened from a notification to one of this person's devices: its decision forms say so (views/queue.origin).
    marker = request.GET.get(notify.MARKER, "")
    push_device = int(marker) if devices.label_of(request.user, marker) is not None else None
    if push_device is not None:
        live[notify.MARKER] = push_device
    context = {"call": call, "live_query": urlencode(live), "push_device": push_device}
    return render(request, "approvals/call_detail.html", context)


@permission_or_403(VIEW_CALLS)
def media(request, pk, index):
    """An image, audio or embedded binary of a result, under a media type the console chose."""
    call = get_object_or_404(Call, pk=pk)
    return media_response(results.media_of(call.result, index), f"call-{pk}-block-{index}.bin")


def media_response(found: tuple[bytes, str] | None, filename: str) -> HttpResponse:
    """A block's bytes under the media type the console chose for it; an embedded binary as a download."""
    if found is None:
        raise Http404("No such media.")
    data, media_type = found
    response = HttpResponse(data, content_type=media_type)
    if media_type == "application/octet-stream":
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, max-age=3600"
    return response
