"""An auditor filters the audit log, opens an event with its call's timeline and exports CSV, in Chromium;
finds a deny reason and an input answer by free-text search and opens the call from the Call column;
and an auditor cannot decide a call."""

import csv
import io
from pathlib import Path

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.audit.models import AuditHead
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.browser.conftest import go_to
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import PASSWORD, make_user

pytestmark = pytest.mark.browser


ACCOUNT = {
    "mode": "form",
    "message": "Which account?",
    "requestedSchema": {"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]},
}


def submit(token, tool, arguments, jsonrpc_id):
    call, _ = lifecycle.receive_call(
        ClientContext(token, revisions.MODERN, "2026-07-28"), tool, arguments, jsonrpc_id, None
    )
    return call


@pytest.fixture
def history(live_console, client_token, refund_tool, operators):
    """Refunds approved and denied, a lookup denied on another server, a refund still pending, an auditor."""
    ann, bob = operators
    asking = submit(client_token, refund_tool, {"order_id": 40, "amount": 10}, 5)
    Call.objects.filter(pk=asking.pk).update(status=Call.Status.FORWARDED)
    asked = requests.open_request(asking, requests.ELICIT, ACCOUNT, InputRequest.Route.OPERATOR)
    requests.answer(asked.pk, ann, "accept", {"account": "Vintage Cellars"})
    denied = submit(client_token, refund_tool, {"order_id": 41, "amount": 400}, 1)
    deciding.decide(denied.pk, bob, False, "needs a manager")
    deciding.decide(submit(client_token, refund_tool, {"order_id": 42, "amount": 20}, 2).pk, ann, True)
    lookup = make_tool(make_server("Records"), "lookup")
    deciding.decide(submit(client_token, lookup, {"customer": "C1"}, 3).pk, ann, False, "not today")
    pending = submit(client_token, refund_tool, {"order_id": 43, "amount": 30}, 4)
    make_user("audrey", roles.AUDITOR)
    return {
        "refund": refund_tool,
        "denied": denied,
        "asking": asking,
        "pending": pending,
        "binding": lifecycle.call_binding(pending),
        "head": AuditHead.objects.get(),
    }


def sign_in(page, url):
    page.goto(url + "/login/")
    page.get_by_label("Username").fill("audrey")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_it_lets_an_auditor_filter_open_an_event_and_export_csv(live_console, history, open_page):
    page = open_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    sign_in(page, live_console)
    expect(page).to_have_url(live_console + "/audit/")
    go_to(page, "Audit")
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()

    page.get_by_label("Tool", exact=True).fill("shop_issue_refund")
    page.get_by_label("Action", exact=True).select_option("call.denied")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table.audit tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("call.denied")
    expect(rows.first).to_contain_text("bob")

    rows.first.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name="call.denied")).to_be_visible()
    timeline = page.locator("ol.history > li")
    expect(timeline).to_have_count(4)
    for step, action in enumerate(["call.received", "call.policy", "call.pending", "call.denied"]):
        expect(timeline.nth(step)).to_contain_text(action)
    expect(page.get_by_text("needs a manager").first).to_be_visible()

    page.go_back()
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    exported = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert exported[0][:6] == ["seq", "at", "actor_type", "actor_id", "actor_name", "action"]
    assert [row[5] for row in exported[1:] if not row[0].startswith("#")] == ["call.denied"]
    ending = {row[0]: row for row in exported if row[0].startswith("#")}
    assert int(ending["# chain head"][1]) >= history["head"].seq
    assert not problems


def test_it_lets_an_auditor_find_a_reason_and_an_answer_by_text_and_open_the_call(live_console, history, open_page):
    page = open_page()
    sign_in(page, live_console)
    page.goto(live_console + "/audit/")
    expect(page.get_by_role("heading", name="Chain verification")).to_be_visible()
    page.get_by_role("button", name="Verify now").click()
    expect(page.locator(".card").get_by_text("intact")).to_be_visible()

    page.get_by_label("Text contains").fill("NEEDS A MANAGER")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table.audit tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("call.denied")
    assert "q=NEEDS+A+MANAGER" in page.url

    page.get_by_label("Text contains").fill("vintage cellars")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("input.answered")
    rows.first.get_by_role("link", name=f"Call {history['asking'].pk}").click()
    expect(page.locator("ol.history > li", has_text="input.answered")).to_be_visible()
    assert page.url.endswith(f"/audit/calls/{history['asking'].pk}/")


def test_it_does_not_let_an_auditor_decide_a_call(live_console, history, open_page):
    pending = history["pending"]
    page = open_page()
    sign_in(page, live_console)
    go_to(page, "Audit")
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    expect(page.get_by_role("link", name="My decisions")).to_have_count(0)
    csrf = next(cookie["value"] for cookie in page.context.cookies() if cookie["name"] == "csrftoken")
    response = page.request.post(
        f"{live_console}/queue/{pending.pk}/decide/",
        headers={"X-CSRFToken": csrf},
        form={"decision": "approve", "reason": "", "binding": history["binding"]},
    )
    # Refused by the permission check, not by a CSRF failure that any forged form would meet too.
    assert response.status == 403 and "CSRF" not in response.text()
    page.goto(f"{live_console}/audit/calls/{pending.pk}/")
    expect(page.locator(".card").get_by_text("Waiting for an operator")).to_be_visible()
    expect(page.locator("ol.history > li")).to_have_count(3)
