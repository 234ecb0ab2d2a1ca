"""An admin governs the policy in Chromium: a rule built with the condition builder, tried, moved, disabled,
deleted, and every change in the audit log with the rule before and after."""

import json

import pytest
from playwright.sync_api import expect

from approvals.catalog.models import Server
from approvals.catalog.surface_models import Resource
from approvals.policy import rules
from approvals.tokens.credentials import create_token
from tests.browser.conftest import go_to
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.browser

REFUND_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "integer"}, "amount": {"type": "number", "maximum": 500}},
    "required": ["order_id", "amount"],
}


@pytest.fixture
def policy(live_console, admin):
    """A refund tool, one rule allowing small refunds, a client token, and the admin's name."""
    make_tool(make_server("Shop", tool_prefix="shop_"), "issue_refund", inputSchema=REFUND_SCHEMA)
    rules.create_rule(
        rules.RuleRequest(
            "allow", tool_glob="shop_issue_*", conditions=[{"path": "amount", "op": "lt", "value": 500}], name="small"
        )
    )
    create_token("agent")
    return admin


def call_form(page):
    return page.locator("[data-try-form]")


def choose_tool(page, live_console):
    """Open the Try page and pick the token and the tool, whose fields then show."""
    page.goto(live_console + "/policy/try/")
    call_form(page).get_by_label("Client token").select_option(label="agent")
    call_form(page).get_by_label("Tool").select_option(label="shop_issue_refund")
    expect(page.locator("[data-schema-fields] legend")).to_have_text("Arguments of shop_issue_refund")


def try_call(page, live_console, arguments):
    choose_tool(page, live_console)
    page.get_by_text("Or the arguments as JSON").click()
    call_form(page).get_by_label("Arguments", exact=True).fill(json.dumps(arguments))
    page.get_by_role("button", name="Try the JSON").click()
    return page.locator("[data-decision]")


def test_it_builds_tries_moves_disables_and_deletes_a_rule_with_every_change_audited(live_console, policy, open_page):
    page = open_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(live_console + "/login/")
    page.get_by_label("Username").fill(policy)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    go_to(page, "Policy")
    page.get_by_role("link", name="New rule").click()
    page.get_by_label("Name", exact=True).fill("no order 7")
    page.get_by_label("Deny").check()
    page.get_by_label("Tools").fill("shop_issue_*")
    expect(page.get_by_label("Argument conditions")).to_be_hidden()
    page.get_by_role("button", name="Add condition").click()
    expect(page.locator("#argument-paths option")).to_have_count(2)
    page.get_by_label("Path", exact=True).fill("order_id")
    page.get_by_label("Operator", exact=True).select_option("eq")
    page.get_by_label("Value", exact=True).fill("7")
    page.get_by_role("button", name="Add rule").click()

    rows = page.locator("table.rules tbody tr[data-rule]")
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_contain_text("order_id eq 7")

    decision = try_call(page, live_console, {"order_id": 7, "amount": 600})
    expect(decision).to_have_text("deny, by no order 7")
    expect(page.locator('[data-trial="small"]')).to_contain_text("condition 1 (amount lt 500) does not hold")
    decision = try_call(page, live_console, {"order_id": 7, "amount": 20})
    expect(decision).to_have_text("allow, by small")

    page.goto(live_console + "/policy/")
    page.get_by_role("button", name="Move no order 7 up").click()
    expect(rows.first).to_have_attribute("data-rule", "no order 7")
    decision = try_call(page, live_console, {"order_id": 7, "amount": 20})
    expect(decision).to_have_text("deny, by no order 7")

    page.goto(live_console + "/policy/")
    rows.first.get_by_role("button", name="Disable").click()
    expect(rows.first).to_contain_text("disabled")
    decision = try_call(page, live_console, {"order_id": 7, "amount": 20})
    expect(decision).to_have_text("allow, by small")

    page.goto(live_console + "/policy/")
    rows.first.get_by_role("link", name="Delete…").click()
    page.get_by_role("button", name="Delete no order 7").click()
    expect(rows).to_have_count(1)

    go_to(page, "Audit")
    changes = {
        "rule.created": ('"before": null', '"name": "no order 7"'),
        "rule.moved": ('"position": 2', '"position": 1'),
        "rule.changed": ('"enabled": true', '"enabled": false'),
        "rule.deleted": ('"name": "no order 7"', '"after": null'),
    }
    for action, shown in changes.items():
        page.goto(live_console + f"/audit/?action={action}")
        page.locator("table.audit tbody tr").filter(has_text=policy).first.get_by_role("link").first.click()
        expect(page.get_by_role("heading", name=action)).to_be_visible()
        for text in shown:
            expect(page.locator("pre.code").first).to_contain_text(text)
    assert not problems


def test_it_tries_a_call_from_the_fields_of_the_tools_schema(live_console, policy, open_page):
    page = open_page()
    page.goto(live_console + "/login/")
    page.get_by_label("Username").fill(policy)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    choose_tool(page, live_console)
    page.get_by_label("order_id").fill("7")
    page.get_by_label("amount").fill("20")
    page.get_by_role("button", name="Try these arguments").click()
    expect(page.locator("[data-decision]")).to_have_text("allow, by small")
    expect(page.get_by_label("amount")).to_have_value("20")

    page.get_by_label("amount").fill("600")
    page.get_by_role("button", name="Try these arguments").click()
    expect(page.locator("[data-schema-fields]")).to_contain_text("less than or equal to 500")
    expect(page.locator("[data-decision]")).to_have_count(0)
    page.get_by_text("Or the arguments as JSON").click()
    shown = call_form(page).get_by_label("Arguments", exact=True)
    expect(shown).to_be_visible()
    assert json.loads(shown.input_value()) == {"order_id": 7, "amount": 20}


def signed_in(page, live_console, username):
    page.goto(live_console + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


@pytest.fixture
def three_rules(policy):
    for name in ("middle", "last"):
        rules.create_rule(rules.RuleRequest("ask", tool_glob=f"shop_{name}_*", name=name))
    return policy


def test_it_moves_a_rule_by_dragging_it_onto_another_row(live_console, three_rules, open_page):
    page = open_page()
    signed_in(page, live_console, three_rules)
    page.goto(live_console + "/policy/")
    rows = page.locator("table.rules tbody tr[data-rule]")
    expect(page.locator("[data-drag-hint]")).to_be_visible()

    rows.nth(2).drag_to(rows.nth(0))
    expect(page.locator(".message.success")).to_contain_text("Moved last")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-rule") for i in range(3)] == ["last", "small", "middle"]

    page.goto(live_console + "/audit/?action=rule.moved")
    page.locator("table.audit tbody tr").filter(has_text=three_rules).first.get_by_role("link").first.click()
    expect(page.locator("pre.code").first).to_contain_text('"position": 3')


def test_it_moves_a_rule_with_the_buttons_when_javascript_is_off(live_console, three_rules, open_browser):
    page = open_browser().new_context(java_script_enabled=False).new_page()
    page.set_default_timeout(15_000)
    signed_in(page, live_console, three_rules)
    page.goto(live_console + "/policy/")
    rows = page.locator("table.rules tbody tr[data-rule]")
    expect(page.locator("[data-drag-hint]")).to_be_hidden()
    assert rows.first.get_attribute("draggable") is None

    page.get_by_role("button", name="Move last up").click()
    expect(page.locator(".message.success")).to_contain_text("Moved last to position 2")
    assert [rows.nth(i).get_attribute("data-rule") for i in range(3)] == ["small", "last", "middle"]


def test_it_tries_a_resource_read_against_a_rule_for_reads(live_console, policy, open_page):
    shop = Server.objects.get(name="Shop")
    Resource.objects.create(
        server=shop, uri="file://orders/7", upstream_name="order", exposed_name="shop_order", definition={}, digest="d"
    )
    rules.create_rule(rules.RuleRequest("ask", applies_to="resource", tool_glob="file://orders/*", name="orders"))
    page = open_page()
    page.goto(live_console + "/login/")
    page.get_by_label("Username").fill(policy)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.goto(live_console + "/policy/try/")
    reading = page.locator("[data-try-read]")
    reading.get_by_label("Client token").select_option(label="agent")
    reading.get_by_label("URI").fill("file://orders/7")
    reading.get_by_role("button", name="Try the read").click()

    expect(page.locator("[data-decision]")).to_have_text("ask, by orders")
    expect(page.locator("[data-hold]")).to_contain_text("It would wait for 1 operator approval")
    expect(page.locator('[data-trial="small"]')).to_contain_text("the rule applies to tool calls")
