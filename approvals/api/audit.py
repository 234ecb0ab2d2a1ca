"""Audit search, for those who read the audit log (auditors and admins)."""

from datetime import datetime

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja import Status as Answer

from approvals.api.auth import require
from approvals.api.schemas import AuditPage, Error, Invalid
from approvals.audit_log import filters, query

router = Router(tags=["audit"])
MAX_PAGE = 200


class AuditQuery(Schema):
    since: datetime | None = None
    until: datetime | None = None
    client: str = ""
    server: str = ""
    tool: int | None = None
    operator: str = ""
    action: str = ""
    outcome: str = ""
    q: str = ""
    before: int | None = None
    limit: int = 50


@router.get("/audit", response={200: AuditPage, 401: Error, 403: Error, 422: Invalid}, summary="Search the audit log")
def audit(request: HttpRequest, criteria: Query[AuditQuery]):
    """The audit page's filter: `client` a token's name, `server` a slug, `tool` an id, `operator` a username,
    `outcome` the final status of the event's call, `q` text anywhere in an event's data. Newest first; pass the
    answer's `older` as `before` for the next page."""
    require(request, "approvals.view_auditevent", "Only auditors and admins read the audit log.")
    fields = criteria.dict(exclude={"before", "limit"})
    form = filters.AuditFilter({name: value for name, value in fields.items() if value not in (None, "")})
    if not form.is_valid():
        errors = [f"{name}: {' '.join(problems)}" for name, problems in form.errors.items()]
        return Answer(422, {"detail": "The filter is not valid.", "errors": errors})
    size = min(max(criteria.limit, 1), MAX_PAGE)
    page = query.keyset_page(query.filter_events(form.cleaned_data), before=criteria.before, size=size)
    return {"events": page.events, "older": page.older}
