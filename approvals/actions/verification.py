"""Verifying the audit chain on demand or on schedule: the verdict kept for the audit page, and told to webhooks
when the chain is not intact."""

from django.db import transaction
from django.utils import timezone

from approvals.audit import verify
from approvals.audit.models import AuditVerification
from approvals.webhooks import announce


def run(run_by: str, expect=None) -> AuditVerification:
    """Verify and keep the result for the audit page."""
    started = timezone.now()
    verdict = verify.verify_chain(expect)
    with transaction.atomic():
        verification = AuditVerification.objects.create(
            started_at=started,
            finished_at=timezone.now(),
            ok=verdict.ok,
            checked=verdict.checked,
            first_seq=verdict.first_seq,
            last_seq=verdict.last_seq,
            broken_seq=verdict.broken_seq,
            expected=verdict.expected,
            found=verdict.found,
            problem=verdict.problem,
            run_by=run_by,
        )
        if not verification.ok:
            announce.verification_failed(verification)
    return verification
