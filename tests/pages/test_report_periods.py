"""Report and evidence periods picked from presets, and date inputs wide enough for their values."""

import io
import json
import re
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.audit_log import periods, report
from approvals.audit_log.filters import PeriodForm
from approvals.policy import rules
from tests.fixtures.people import make_user


@pytest.mark.parametrize(
    "preset, since, until",
    [
        ("24h", datetime(2026, 3, 14, 12, tzinfo=UTC), datetime(2026, 3, 15, 12, tzinfo=UTC)),
        ("7d", datetime(2026, 3, 8, 12, tzinfo=UTC), datetime(2026, 3, 15, 12, tzinfo=UTC)),
        ("30d", datetime(2026, 2, 13, 12, tzinfo=UTC), datetime(2026, 3, 15, 12, tzinfo=UTC)),
        ("month", datetime(2026, 2, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)),
    ],
)
def test_it_turns_a_preset_into_its_period(preset, since, until):
    assert periods.resolve(preset, datetime(2026, 3, 15, 12, tzinfo=UTC)) == (since, until)


def test_it_takes_last_month_across_a_new_year():
    assert periods.resolve("month", datetime(2026, 1, 9, 5, tzinfo=UTC)) == (
        datetime(2025, 12, 1, tzinfo=UTC),
        datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_it_reports_the_preset_period_instead_of_the_dates(db):
    form = report.ReportPeriod({"preset": "7d", "since": "2001-01-01T00:00:00"})
    assert form.is_valid()
    since, until = form.cleaned_data["since"], form.cleaned_data["until"]
    assert until - since == timedelta(days=7) and abs(until - timezone.now()) < timedelta(minutes=1)


def test_it_offers_the_presets_on_the_report_page(db, client):
    client.force_login(make_user("audrey", roles.AUDITOR))
    html = client.get(reverse("audit_report"), {"preset": "30d"}).content.decode()
    assert 'value="month">Last calendar month</option>' in html
    assert '<option value="30d" selected>Last 30 days</option>' in html
    shown = re.search(r'<time datetime="([^"]+)">', html).group(1)
    assert datetime.fromisoformat(shown) < timezone.now() - timedelta(days=29)


def test_it_makes_an_evidence_pack_from_a_preset_without_dates(db, client):
    client.force_login(make_user("audrey", roles.AUDITOR))
    rules.create_rule(rules.RuleRequest(action="ask", name="ask for everything"))
    assert 'name="pack-preset"' in client.get(reverse("audit")).content.decode()
    answer = client.post(reverse("audit_evidence"), {"pack-preset": "24h"})
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(answer.streaming_content))) as opened:
        assert json.loads(opened.read("manifest.json"))["first_seq"] >= 1


def test_it_asks_for_a_preset_or_both_dates():
    form = PeriodForm({"since": "2026-01-01T00:00"})
    assert not form.is_valid() and "choose a period, or give both dates" in str(form.errors)


def test_it_draws_datetime_inputs_wide_enough_for_seconds_and_am_pm():
    css = (Path(__file__).resolve().parents[2] / "static" / "console.css").read_text()
    width = re.search(r'input\[type="datetime-local"\] \{ min-width: ([\d.]+)rem; \}', css)
    assert width and float(width.group(1)) >= 16
