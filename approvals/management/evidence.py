"""Making an evidence pack, for the command and the audit page alike: verify, sign a checkpoint, write the pack."""

from approvals.actions import verification
from approvals.audit import checkpoints
from approvals.audit_log import evidence


def make_pack(target, since, until, run_by: str) -> dict:
    """The pack of the period into `target`; evidence.Empty or checkpoints.Refused when there is none to make."""
    chosen = evidence.period(since, until)
    verified = verification.run(run_by)
    checkpoints.take()
    return evidence.write_pack(target, chosen, checkpoints.first_from(chosen.last_seq), verified)
