"""Appends from several processes at once never fork the chain (PostgreSQL, where processes really race)."""

import os
import subprocess
import sys
from itertools import pairwise

import pytest
from django.conf import settings
from django.db import connection

from approvals.audit import verify
from approvals.audit.models import AuditEvent, AuditHead

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PROCESSES = 4
EACH = 50


def test_it_keeps_one_gap_free_chain_under_concurrent_appends_from_several_processes():
    AuditHead.objects.get_or_create(pk=1)
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    url = f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {**os.environ, "DATABASE_URL": url}
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.audit.appender", str(n), str(EACH)],
            env=env,
            cwd=settings.BASE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        assert [writer.stdout.readline() for writer in writers] == ["ready\n"] * PROCESSES
        for writer in writers:
            writer.stdin.close()
        assert [writer.wait(120) for writer in writers] == [0] * PROCESSES
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()

    seqs = list(AuditEvent.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, PROCESSES * EACH + 1))
    names = list(AuditEvent.objects.order_by("seq").values_list("actor_name", flat=True))
    # Interleaved, or the test proved nothing about concurrency.
    assert sum(a != b for a, b in pairwise(names)) > PROCESSES
    verdict = verify.verify_chain()
    assert verdict.ok, verdict.summary()
    assert verdict.checked == PROCESSES * EACH
