"""Forwarding the audit log to a SIEM: a real rsyslogd over TCP and TLS, an HTTPS collector, outages of each."""

import json
import os
import re
import socket
import struct
import threading
import time

import pytest
from django.db import connection
from django.test import Client

from approvals import tasks
from approvals.audit import siem_formats, siem_forwarding
from approvals.audit.encoding import HASHED, encode_event
from approvals.audit.models import AuditEvent, AuditForwardCursor
from approvals.audit.public_chain import GENESIS, public_chain_value
from approvals.audit.siem_transport import url_problem
from tests.audit.conftest import append
from tests.audit.receivers import Collector, Rsyslog
from tests.fixtures.processes import start_console

# How long the receiver stays down in the outage test; a real stop and start whatever it is set to.
OUTAGE_SECONDS = float(os.environ.get("FORWARD_OUTAGE_SECONDS", 30))


@pytest.fixture
def forward_to(settings):
    def configure(url, fmt="json", ca_file="", token=""):
        settings.AUDIT_FORWARD_URL, settings.AUDIT_FORWARD_FORMAT = url, fmt
        settings.AUDIT_FORWARD_CA_FILE, settings.AUDIT_FORWARD_TOKEN = str(ca_file or ""), token
        settings.AUDIT_FORWARD_TIMEOUT_SECONDS = 2.0

    return configure


@pytest.fixture
def rsyslog(tmp_path):
    receivers = []

    def start(tls=False):
        receiver = Rsyslog(tmp_path / f"rsyslog{len(receivers)}", tls)
        receivers.append(receiver)
        receiver.start()
        return receiver

    for folder in range(2):
        (tmp_path / f"rsyslog{folder}").mkdir()
    yield start
    for receiver in receivers:
        receiver.stop()


def expected_values():
    """Each event's public chain value, recomputed from the database."""
    value, values = GENESIS, {}
    for row in AuditEvent.objects.order_by("seq").values_list(*HASHED, "hash"):
        value = public_chain_value(value, encode_event(row))
        values[row[0]] = value
    return values


def received_json(lines):
    return [json.loads(line) for line in lines]


def received_cef(lines):
    return [
        {"seq": int(re.search(r"externalId=(\d+)", line)[1]), "chain_value": re.search(r"cs1=([0-9a-f]{64})", line)[1]}
        for line in lines
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(("tls", "fmt"), [(False, "json"), (True, "cef")], ids=["tcp-json", "tls-cef"])
def test_it_forwards_2000_events_to_rsyslog_once_in_order(rsyslog, forward_to, tls, fmt):
    receiver = rsyslog(tls=tls)
    forward_to(receiver.url, fmt, receiver.cert)
    append(2000, "call.received")
    total = AuditEvent.objects.count()

    forwarded = siem_forwarding.forward()

    assert forwarded.error == "" and forwarded.sent == total
    received = (received_json if fmt == "json" else received_cef)(receiver.wait_for(total))
    values = expected_values()
    assert [event["seq"] for event in received] == list(values)
    assert [event["chain_value"] for event in received] == list(values.values())
    cursor = AuditForwardCursor.objects.get()
    assert (cursor.seq, cursor.chain_value, cursor.holder) == (total, values[total], "")
    assert siem_forwarding.forward().sent == 0


# A real outage of OUTAGE_SECONDS, the longest test of the suite: run once, on the services when that pass follows.
@pytest.mark.services(once=True)
@pytest.mark.django_db
@pytest.mark.timeout(OUTAGE_SECONDS + 120)
def test_it_sends_what_rsyslog_missed_while_stopped_with_no_gap(rsyslog, forward_to):
    receiver = rsyslog()
    forward_to(receiver.url)
    append(300, "call.received")
    assert siem_forwarding.forward().error == ""
    before = AuditEvent.objects.count()
    assert len(receiver.wait_for(before)) == before

    receiver.stop()
    ends = time.monotonic() + OUTAGE_SECONDS
    while time.monotonic() < ends:
        append(50, "call.received")
        started = time.monotonic()
        failed = siem_forwarding.forward()
        assert failed.error and failed.sent == 0 and failed.seq == before
        assert time.monotonic() - started < 2.0
        time.sleep(1)
    assert siem_forwarding.lag().events == AuditEvent.objects.count() - before
    receiver.start()

    total = AuditEvent.objects.count()
    assert siem_forwarding.forward().error == ""
    seqs = [event["seq"] for event in received_json(receiver.wait_for(total))]
    # At least once: each sequence number arrives, in order, none missing.
    assert sorted(set(seqs)) == list(range(1, total + 1))
    assert seqs == sorted(seqs)
    assert siem_forwarding.lag().events == 0


@pytest.mark.django_db
def test_it_keeps_sending_to_an_https_collector_that_failed_three_times(tmp_path, forward_to):
    with Collector(tmp_path, [500, 500, 500]) as collector:
        forward_to(collector.url, "json", collector.cert, token="hec-token")
        append(1200, "call.received")
        total = AuditEvent.objects.count()

        runs = [siem_forwarding.forward() for _ in range(4)]

        assert [bool(run.error) for run in runs] == [True, True, True, False]
        assert "answered 500" in runs[0].error
        values = expected_values()
        assert [entry["event"]["seq"] for entry in collector.events] == list(range(1, total + 1))
        assert [entry["event"]["chain_value"] for entry in collector.events] == list(values.values())
        assert set(collector.requests) == {"Splunk hec-token"}


@pytest.mark.django_db
def test_it_gives_up_on_a_receiver_that_never_acknowledges_within_the_timeout(forward_to, settings):
    listener = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    forward_to(f"syslog+tcp://127.0.0.1:{listener.getsockname()[1]}")
    settings.AUDIT_FORWARD_TIMEOUT_SECONDS = 0.3
    append(5)
    started = time.monotonic()
    forwarded = siem_forwarding.forward()
    assert time.monotonic() - started < 2
    assert forwarded.error and forwarded.seq == 0
    assert AuditForwardCursor.objects.get().error == forwarded.error
    listener.close()
    held[0][0].close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_never_holds_up_an_append_while_it_waits_on_a_receiver(forward_to, settings):
    listener = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    forward_to(f"syslog+tcp://127.0.0.1:{listener.getsockname()[1]}")
    settings.AUDIT_FORWARD_TIMEOUT_SECONDS = 8.0
    append(5)

    def forward_and_close():
        try:
            results.append(siem_forwarding.forward())
        finally:
            connection.close()

    results = []
    waiting = threading.Thread(target=forward_and_close)
    waiting.start()
    while not held:
        time.sleep(0.01)
    append(50, "call.received")
    # Appended while the forwarder still waits for an acknowledgement that never comes.
    assert waiting.is_alive()
    # The receiver then drops the connection, which fails the send as its timeout would, without waiting it out.
    receiver = held[0][0]
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    receiver.close()
    waiting.join()
    listener.close()
    assert results[0].error and results[0].seq == 0
    assert AuditEvent.objects.count() == 55


@pytest.mark.django_db
def test_it_leaves_the_cursor_to_the_process_holding_its_lease(forward_to):
    forward_to("syslog+tcp://127.0.0.1:9")
    append(3)
    assert siem_forwarding.claim(siem_forwarding.cursor().pk, "another") is not None
    assert siem_forwarding.forward().error == "another process is forwarding"


@pytest.mark.django_db
def test_it_shows_the_lag_to_staff_and_scrapers_and_tells_readyz_askers_nothing_of_the_siem(forward_to, login):
    forward_to("syslog+tcp://127.0.0.1:9")
    append(7)
    assert siem_forwarding.forward().error
    readyz = Client(REMOTE_ADDR="203.0.113.9").get("/readyz").content.decode()
    for secret in ("127.0.0.1:9", "syslog", "acknowledged_seq", "Connection refused", "events_behind"):
        assert secret not in readyz
    scraped = Client().get("/metrics").content.decode()
    assert re.search(r"^mcp_console_audit_forward_events_behind 7\.0$", scraped, re.M)
    assert re.search(r"^mcp_console_audit_forward_failing 1\.0$", scraped, re.M)
    assert re.search(r"^mcp_console_audit_forward_seconds_behind \d", scraped, re.M)
    page = login("auditor").get("/audit/").content.decode()
    # Signing in is an event too.
    assert f"{AuditEvent.objects.count()} events behind" in page


def test_it_frames_syslog_by_octet_count_and_escapes_cef():
    from datetime import UTC, datetime

    row = (5, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "user", 1, "a|b\nc", "call.denied", "r", 9, 2, 3, 4)
    row += ({"reason": "x=y\nz"}, "p" * 64, "h" * 64)
    fields = siem_formats.event_fields(row, "c" * 64)
    frame = siem_formats.syslog_entry(fields, "cef")
    length, _, message = frame.partition(b" ")
    assert int(length) == len(message)
    assert message.startswith(b"<110>1 2026-01-02T03:04:05+00:00 ")
    assert b'[audit@32473 seq="5" chainValue="' + b"c" * 64 + b'"]' in message
    text = siem_formats.cef_text(fields)
    assert "|call.denied|call.denied|5|" in text
    assert "suser=a|b\\nc " in text and 'msg={"reason":"x\\=y\\\\nz"}' in text
    assert json.loads(siem_formats.json_text(fields))["seq"] == 5


@pytest.mark.parametrize("fmt", ["json", "cef"])
def test_it_escapes_unicode_line_separators_and_c1_controls_before_they_reach_syslog(fmt):
    """A receiver that splits on U+2028, NEL or a control would read a forged event from a person's input."""
    from datetime import UTC, datetime

    breaking = "\u2028\u2029\x85\x1b\x7f\x0b\x9b"
    forged = f"x{breaking}<110>1 2026-01-02T03:04:05+00:00 h mcp-approval-console - login_failed"
    row = (5, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "user", 1, f"eve{breaking}", "call.denied", "r", 9, 2, 3, 4)
    row += ({"reason": forged}, "p" * 64, "h" * 64)
    fields = siem_formats.event_fields(row, "c" * 64)
    message = siem_formats.syslog_entry(fields, fmt).partition(b" ")[2].decode()
    assert not set(breaking) & set(message)
    assert "u2028" in message and "u0085" in message
    if fmt == "json":
        sent = json.loads(message.split("] ", 1)[1])
        assert (sent["actor_name"], sent["data"]["reason"]) == (f"eve{breaking}", forged)
    hec = json.loads(siem_formats.hec_entry(fields, fmt))
    assert not set(breaking) & set(siem_formats.hec_entry(fields, fmt).decode())
    assert (hec["event"]["data"]["reason"] if fmt == "json" else hec["event"]).count("login_failed") == 1


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"AUDIT_FORWARD_URL": "udp://siem_formats.example:514"}, "AUDIT_FORWARD_URL cannot be used"),
        ({"AUDIT_FORWARD_URL": "syslog+tcp://siem_formats.example:514", "AUDIT_FORWARD_FORMAT": "leef"}, "json or cef"),
    ],
)
def test_it_refuses_to_start_with_a_forwarding_setting_it_cannot_use(env, said):
    started = start_console(**env)
    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr and said in started.stderr


def test_it_does_nothing_on_schedule_when_no_receiver_is_set(db):
    assert tasks.forward_audit() == "AUDIT_FORWARD_URL is not set."
    assert not AuditForwardCursor.objects.exists()


def test_it_refuses_forward_urls_it_cannot_use():
    assert url_problem("syslog+tcp://siem_formats.example:6514") == ""
    assert url_problem("https://siem_formats.example:8088/services/collector/event") == ""
    assert "must start with" in url_problem("http://siem_formats.example")
    assert "needs a port" in url_problem("syslog+tls://siem_formats.example")
    assert "user name" in url_problem("https://u:p@siem_formats.example/")
