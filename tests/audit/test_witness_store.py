"""Verification without its witness store says "not verified"; after a restore, --reset-witness accepts the head."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from approvals.audit import verify, witness
from approvals.audit.models import AuditEvent, AuditVerification
from tests.audit.conftest import append, cut_the_end, trigger_disabled

# Nothing listens on port 1: a Redis there refuses every connection at once.
NO_REDIS = {
    "BACKEND": "django.core.cache.backends.redis.RedisCache",
    "LOCATION": "redis://127.0.0.1:1/0",
    "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
}


@pytest.fixture
def store_down(settings):
    settings.CACHES = {**settings.CACHES, "audit_witness": NO_REDIS}


def test_it_reports_not_verified_rather_than_failing_when_the_witness_store_is_down(chain, store_down):
    verdict = verify.verify_chain()
    assert verdict.unverified and not verdict.ok and verdict.checked == 10
    assert verdict.summary().startswith("Not verified: the witness store did not answer (ConnectionError")
    assert "the links hold from seq 1 to 10" in verdict.problem


def test_it_still_reports_a_broken_link_while_the_witness_store_is_down(chain, store_down):
    with trigger_disabled():
        AuditEvent.objects.filter(seq=3).delete()
    verdict = verify.verify_chain()
    assert not verdict.ok and verdict.broken_seq == 3


def test_it_exits_2_saying_not_verified_and_keeps_the_result_for_the_audit_page(chain, store_down):
    with pytest.raises(CommandError, match="^not verified: the witness store did not answer") as refused:
        call_command("verify_audit")
    assert refused.value.returncode == 2
    kept = AuditVerification.objects.get()
    assert not kept.ok and kept.broken_seq is None and "witness store" in kept.problem


def test_it_accepts_the_head_of_a_restored_database_with_reset_witness_and_audits_it(chain, capsys):
    assert verify.verify_chain().ok
    cut_the_end(chain, keep=7)
    assert "gone from the end" in verify.verify_chain().problem

    call_command("verify_audit", "--reset-witness")

    reset = AuditEvent.objects.get(action="audit.witness_reset")
    assert reset.seq == 8 and reset.data == {"witnessed_before": {"seq": 10, "hash": chain[-1].hash}}
    assert witness.read() == (8, reset.hash)
    assert "witness reset to seq 8" in capsys.readouterr().out
    append(2)
    assert verify.verify_chain().ok


def test_it_resets_nothing_while_the_witness_store_is_down(chain, store_down):
    with pytest.raises(CommandError, match="the witness was not reset") as refused:
        call_command("verify_audit", "--reset-witness")
    assert refused.value.returncode == 2 and not AuditEvent.objects.filter(action="audit.witness_reset").exists()
