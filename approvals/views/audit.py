"""The audit pages: the filtered log, one event with its call's timeline, exports, evidence packs, verification,
retention and the public key that checks the signed checkpoints."""

import logging
import tempfile

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals import tasks
from approvals.audit import checkpoints, retention, siem_forwarding
from approvals.audit.models import AuditCheckpoint, AuditEvent, AuditHead, AuditVerification
from approvals.audit_log import evidence, export, filters, query
from approvals.calls.models import Call
from approvals.forms.fields import whole_number
from approvals.views.decorators import permission_or_403, role_required

log = logging.getLogger(__name__)


def cursor(request, name):
    return whole_number(request.GET.get(name, ""), most_digits=18)


@permission_or_403("approvals.view_auditevent")
def audit_log(request):
    form = filters.AuditFilter(request.GET)
    events = query.filter_events(form.cleaned_data) if form.is_valid() else AuditEvent.objects.none()
    page = query.keyset_page(events, cursor(request, "before"), cursor(request, "after"))
    return render(
        request,
        "approvals/audit_log.html",
        {
            "form": form,
            "fields": filters.filter_fields(form),
            "page": page,
            "events": query.labelled(page.events),
            "matching": query.bounded_count(events, form.cleaned_data if form.is_valid() else None),
            "head": AuditHead.objects.filter(pk=1).first(),
            "last_check": AuditVerification.objects.first(),
            "checkpoint": AuditCheckpoint.objects.first(),
            "evidence_form": filters.PeriodForm(prefix="pack"),
            "retention_days": retention.retention_days(),
            "forwarding": siem_forwarding.lag(),
        },
    )


def visible_call(request, call_id):
    if call_id is None:
        return None
    if not query.may_see_call(request.user, call_id):
        raise PermissionDenied("Only auditors and the operator who decided it see this call.")
    return Call.objects.select_related("token", "server", "tool").filter(pk=call_id).first()


@role_required
def audit_event(request, seq):
    event = get_object_or_404(AuditEvent, seq=seq)
    if event.call_id is None and not request.user.has_perm("approvals.view_auditevent"):
        raise PermissionDenied("Only auditors read the audit log.")
    call = visible_call(request, event.call_id)
    timeline = query.labelled(query.call_timeline(event.call_id)) if event.call_id else []
    return render(
        request,
        "approvals/audit_event.html",
        {
            "event": query.labelled([event])[0],
            "call": call,
            "call_id": event.call_id,
            "timeline": timeline,
        },
    )


@role_required
def audit_call(request, pk):
    call = visible_call(request, pk)
    timeline = query.labelled(query.call_timeline(pk))
    if call is None and not timeline:
        raise Http404("No such call.")
    return render(
        request, "approvals/audit_event.html", {"event": None, "call": call, "call_id": pk, "timeline": timeline}
    )


@permission_or_403("approvals.export_audit")
def audit_export_view(request, fmt):
    form = filters.AuditFilter(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("The filter is not valid: " + "; ".join(form.errors.as_text().splitlines()))
    chunks = export.export_chunks(query.filter_events(form.cleaned_data), fmt, through=signed_head())
    response = StreamingHttpResponse(export.async_chunks(chunks), content_type=export.FORMATS[fmt][1])
    response["Content-Disposition"] = f'attachment; filename="audit-{timezone.now():%Y%m%d-%H%M%S}.{fmt}"'
    return response


def signed_head() -> int | None:
    """Sign the head, so that an export ends with a checkpoint covering it; the seq signed, or None when refused."""
    try:
        checkpoint = checkpoints.take()
    except checkpoints.Refused:
        log.exception("the audit checkpoint was refused")
        return None
    return checkpoint.seq if checkpoint else None


@require_POST
@permission_or_403("approvals.export_audit")
def audit_evidence(request):
    form = filters.PeriodForm(request.POST, prefix="pack")
    if not form.is_valid():
        messages.error(request, "An evidence pack needs a period: " + "; ".join(form.errors.as_text().splitlines()))
        return redirect("audit")
    since, until = form.cleaned_data["since"], form.cleaned_data["until"]
    # Closed by the response once sent, or below when there is nothing to send.
    pack = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        evidence.make_pack(pack, since, until, request.user.get_username())
    except (evidence.Empty, checkpoints.Refused) as exc:
        pack.close()
        messages.error(request, f"No evidence pack: {exc}.")
        return redirect("audit")
    pack.seek(0)
    name = f"evidence-{since:%Y%m%d-%H%M}-{until:%Y%m%d-%H%M}.zip"
    return FileResponse(pack, as_attachment=True, filename=name, content_type="application/zip")


@role_required
def audit_public_key(request):
    # Harmless to show, but like every page only to the console's people; they hand it to outside auditors.
    return HttpResponse(checkpoints.public_key_pem(), content_type="application/x-pem-file")


@require_POST
@permission_or_403("approvals.export_audit")
def audit_verify(request):
    # Inline where tasks run inline (the embedded console); a worker's job in production.
    tasks.verify_audit_chain.delay(run_by=request.user.get_username())
    messages.info(request, "Verification started; its result shows above once it has run.")
    return redirect("audit")


@require_POST
@permission_or_403("approvals.change_auditsettings")
def audit_retention_view(request):
    days = whole_number(request.POST.get("retention_days", ""))
    if days is None or days > 36500:
        messages.error(request, "Retention is a whole number of days from 0 (keep forever) to 36500.")
    elif retention.set_retention(days, request.user):
        messages.success(request, f"Events are now kept {retention_text(days)}.")
    else:
        messages.info(request, f"Events were already kept {retention_text(days)}.")
    return redirect("audit")


def retention_text(days):
    return "forever" if days == 0 else f"for {days} days"


@role_required
def my_decisions(request):
    calls, older = query.decided_calls(request.user, cursor(request, "before"))
    return render(request, "approvals/audit_decisions.html", {"calls": calls, "older": older})
