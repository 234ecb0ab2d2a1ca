"""Two operators work the queue in Chromium while a real MCP client waits on the console for their decisions."""

import re

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.catalog.models import Server
from approvals.policy import rules
from tests.browser.queue_pages import DWELL_MS, LOOKUP, ClientCall, console, left_queue, pick, queue_page, row_of

pytestmark = pytest.mark.browser
__all__ = ["console"]  # the fixture, used by name


def test_it_shows_a_new_call_to_both_operators_and_the_second_sees_who_approved(console, open_browser):
    browser = open_browser()
    ann, bob = queue_page(browser, console, "ann"), queue_page(browser, console, "bob")

    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C007"})
    for page in (ann, bob):
        expect(row_of(page)).to_be_visible()
        expect(row_of(page)).to_contain_text("browser agent")
        expect(row_of(page)).to_contain_text("C007")
        expect(page).to_have_title(re.compile(r"^\(1\) Queue"))
    detail = pick(bob)
    expect(detail).to_contain_text("the console's shared connection to Demo")

    pick(ann).get_by_role("button", name="Approve").click()
    # Ann's decision confirms beside her panel; Bob, who had the call open, keeps it in place, read-only.
    expect(left_queue(ann)).to_contain_text("approved · view")
    expect(row_of(ann)).to_have_count(0)
    # The note follows the call on: "· running upstream", then "· completed", as the demo answers.
    left = re.compile(r"Approved by ann( · [a-z ]+)?, \d+s ago")
    expect(bob.locator("[data-queue-pane] [data-left]")).to_contain_text(left)
    expect(bob.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
    expect(left_queue(bob)).to_contain_text("Approved by ann")
    expect(bob).to_have_title(re.compile(r"^Queue"))
    # Once Bob moves on, the ended call goes.
    bob.keyboard.press("Escape")
    expect(row_of(bob)).to_have_count(0)

    result = client.answer()
    assert not result.is_error
    assert "Customer C007" in client.text()


def test_it_answers_a_denial_with_its_reason(console, open_browser):
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C003"})

    detail = pick(ann)
    detail.get_by_placeholder("Reason (told to the client)").fill("this customer opted out of lookups")
    detail.get_by_role("button", name="Deny").click()
    expect(row_of(ann)).to_have_count(0)
    expect(left_queue(ann)).to_contain_text(re.compile(r"Call \d+ denied · view"))

    assert client.answer().is_error
    assert "this customer opted out of lookups" in client.text()


def test_it_forwards_the_arguments_an_operator_edited(console, open_browser):
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C007"})

    pick(ann).get_by_role("link", name="Edit then approve").click()
    ann.get_by_label("Customer id").fill("C012")
    ann.get_by_role("button", name="Approve with these arguments").click()
    expect(ann.locator(".message.success")).to_contain_text("Approved with edited arguments")

    text = client.text()
    assert "Customer C012" in text and "Liam O'Connor" in text


def test_it_works_the_queue_from_the_keyboard_asking_twice_for_a_tool_not_known_read_only(console, open_browser):
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    clients = []
    for number in (1, 2, 3):
        clients.append(ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": f"C00{number}"}))
        expect(row_of(ann)).to_have_count(number)
    selected = ann.locator("[data-queue] [data-call-row].selected")

    # Nothing is selected: a stray key decides nothing.
    ann.keyboard.press("a")
    ann.wait_for_timeout(300)
    expect(row_of(ann)).to_have_count(3)
    expect(selected).to_have_count(0)

    # A key right after the selection moved lands on nothing: the call has not been seen yet.
    ann.keyboard.press("j")
    expect(selected).to_contain_text("C001")
    ann.keyboard.press("a")
    ann.keyboard.press("a")
    ann.wait_for_timeout(DWELL_MS)
    expect(ann.locator("[data-queue-pane] [data-armed]")).to_have_count(0)
    expect(row_of(ann)).to_have_count(3)
    # Demo is not a trusted server, so its read-only hint counts for nothing: each key is pressed twice.
    ann.keyboard.press("a")
    expect(ann.locator("[data-queue-pane] [data-armed]")).to_contain_text("Press a again")
    ann.wait_for_timeout(300)
    expect(row_of(ann)).to_have_count(3)
    assert clients[0].thread.is_alive(), "a single key must not approve"
    ann.keyboard.press("a")
    expect(row_of(ann, "C001")).to_have_count(0)
    expect(left_queue(ann)).to_contain_text(re.compile(r"Call \d+ approved · view"))
    expect(selected).to_contain_text("C002")

    ann.keyboard.press("j")
    expect(selected).to_contain_text("C003")
    ann.wait_for_timeout(DWELL_MS)
    ann.keyboard.press("d")
    ann.keyboard.press("d")
    ann.keyboard.type("not this one")
    ann.keyboard.press("Enter")
    expect(row_of(ann, "C003")).to_have_count(0)
    expect(selected).to_contain_text("C002")
    ann.wait_for_timeout(DWELL_MS)
    ann.keyboard.press("a")
    ann.keyboard.press("a")
    expect(row_of(ann)).to_have_count(0)

    assert "Customer C001" in clients[0].text() and "Customer C002" in clients[1].text()
    assert clients[2].answer().is_error and "not this one" in clients[2].text()


def test_it_denies_the_selected_calls_with_one_reason_and_the_other_operator_sees_it_live(console, open_browser):
    browser = open_browser()
    ann, bob = queue_page(browser, console, "ann"), queue_page(browser, console, "bob")
    clients = [ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": f"C00{n}"}) for n in (1, 2, 3)]
    for page in (ann, bob):
        expect(row_of(page)).to_have_count(3)
        expect(page.locator("[data-group] [data-group-count]")).to_have_text("3")

    ann.get_by_role("button", name="Select all shown").click()
    row_of(ann, "C003").get_by_role("checkbox").uncheck()
    ann.get_by_label("Reason for denying the selected calls").fill("bulk lookups are not allowed")
    ann.get_by_role("button", name="Deny selected").click()

    # Ann's page is the queue afresh, without the denied calls; Bob's changes in place.
    expect(ann.locator(".message.success")).to_contain_text("Denied 2 calls.")
    expect(row_of(ann)).to_have_count(1)
    expect(pick(ann, "C003").get_by_role("button", name="Approve")).to_be_visible()
    expect(row_of(bob)).to_have_count(1)
    expect(left_queue(bob)).to_contain_text("Denied by ann: bulk lookups are not allowed")
    expect(bob.locator("[data-group] [data-group-count]")).to_have_text("1")
    for client in clients[:2]:
        assert client.answer().is_error and "bulk lookups are not allowed" in client.text()

    pick(bob, "C003").get_by_role("button", name="Approve").click()
    assert "Customer C003" in clients[2].text()


def test_it_tells_a_late_click_who_decided_first(console, open_browser):
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C009"})
    expect(row_of(ann)).to_be_visible()
    # Bob's page hears nothing after loading, as if his connection had dropped.
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": console["sessions"]["bob"], "url": console["url"]}])
    bob = context.new_page()
    bob.route_web_socket(re.compile(r"/ws/console/"), lambda socket: None)
    bob.goto(console["url"] + "/queue/")
    expect(row_of(bob)).to_be_visible()

    pick(ann).get_by_role("button", name="Approve").click()
    expect(row_of(ann)).to_have_count(0)
    detail = pick(bob)
    detail.get_by_placeholder("Reason (told to the client)").fill("looks wrong")
    detail.get_by_role("button", name="Deny").click()
    # The late click learns who won, on the panel where it clicked; the call stays there, read-only, until Bob moves.
    expect(detail.locator(".notice")).to_contain_text(re.compile(r"Already approved by ann\b"))
    expect(detail.locator("[data-left]")).to_contain_text("Already approved by ann")
    expect(detail.get_by_role("button", name="Deny")).to_be_disabled()
    bob.keyboard.press("Escape")
    expect(row_of(bob)).to_have_count(0)
    assert "Customer C009" in client.text()


def test_it_forwards_a_quorum_call_only_when_a_second_operator_approves_it(console, open_browser):
    rules.create_rule(rules.RuleRequest("ask", tool_glob=LOOKUP, name="two people", approvals_needed=2))
    browser = open_browser()
    ann, bob = queue_page(browser, console, "ann"), queue_page(browser, console, "bob")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C004"})
    panes = {page: pick(page) for page in (ann, bob)}
    for page in (ann, bob):
        expect(panes[page].locator("[data-approvals]")).to_have_text("0 of 2 approvals")

    panes[ann].get_by_role("button", name="Approve").click()
    for page in (ann, bob):
        expect(panes[page].locator("[data-approvals]")).to_have_text("1 of 2 approvals: ann")
    expect(panes[ann].get_by_role("button", name="Approve")).to_be_disabled()
    expect(panes[ann].locator("[data-refusal]")).to_have_text("You approved already: 1 of 2 approvals: ann.")
    expect(panes[bob].get_by_role("button", name="Approve")).to_be_enabled()
    assert client.thread.is_alive(), "one approval of two must not answer the client"

    panes[bob].get_by_role("button", name="Approve").click()
    # Bob's log has his answer or the news of it, whichever came first; Ann's has the news.
    expect(left_queue(ann)).to_contain_text("Approved by ann and bob")
    expect(left_queue(bob)).to_contain_text(re.compile("approved", re.IGNORECASE))
    assert "Customer C004" in client.text()


def test_it_decides_on_one_key_a_call_a_trusted_server_marks_read_only(console, open_browser):
    Server.objects.filter(name="Demo").update(trusted=True)
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C006"})
    expect(row_of(ann)).to_have_attribute("data-read-only", "true")

    ann.keyboard.press("j")
    ann.wait_for_timeout(DWELL_MS)
    ann.keyboard.press("a")
    expect(row_of(ann)).to_have_count(0)
    assert "Customer C006" in client.text()


def test_it_shows_who_took_a_call_live_and_an_admin_releases_it(console, open_browser, person):
    _, admin = person("ada", roles.ADMIN)
    console["sessions"]["ada"] = admin.cookies["sessionid"].value
    browser = open_browser()
    ann, bob, ada = (queue_page(browser, console, name) for name in ("ann", "bob", "ada"))
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C008"})

    pick(ann).get_by_role("button", name="Take it").click()
    for page in (bob, ada):
        expect(row_of(page).locator("[data-claimed-by]")).to_have_text("ann")
    expect(pick(bob).locator("[data-claim]")).to_have_text("ann")
    expect(pick(bob).get_by_role("button", name="Release")).to_have_count(0)
    pick(ada).get_by_role("button", name="Release").click()
    for page in (ann, bob):
        expect(row_of(page).locator("[data-claimed-by]")).to_have_count(0)

    pick(bob).get_by_role("button", name="Approve", exact=True).click()
    assert "Customer C008" in client.text()


def test_it_makes_a_rule_from_a_pending_call_that_allows_the_same_call(console, open_browser, person):
    _, admin = person("ada", roles.ADMIN)
    console["sessions"]["ada"] = admin.cookies["sessionid"].value
    browser = open_browser()
    ada = queue_page(browser, console, "ada")
    client = ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C010"})

    pick(ada).get_by_role("link", name="Always allow calls like this").click()
    expect(ada.get_by_label(f"This tool: every call to {LOOKUP}")).to_be_checked()
    ada.get_by_label("This tool with the argument values ticked below").check()
    ada.get_by_label('customer_id = "C010"').check()
    ada.get_by_role("button", name="Preview").click()
    expect(ada.locator("[data-preview]")).to_contain_text("An allow rule would be placed")
    ada.get_by_role("button", name="Add rule and approve").click()
    expect(ada.locator(".message.success")).to_contain_text(f"allow {LOOKUP} with these values")
    assert "Customer C010" in client.text()

    assert "Customer C010" in ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C010"}).text()
    ClientCall(console["mcp"], console["secret"], LOOKUP, {"customer_id": "C011"})
    expect(row_of(ada, "C011")).to_be_visible()


def test_it_shows_a_running_call_s_upstream_progress_on_its_page(console, open_browser):
    browser = open_browser()
    ann = queue_page(browser, console, "ann")
    client = ClientCall(console["mcp"], console["secret"], "demo_export_report", {"report": "orders", "seconds": 6})
    pick(ann, "demo_export_report").get_by_role("button", name="Approve", exact=True).click()
    expect(left_queue(ann)).to_contain_text(re.compile("approved", re.IGNORECASE))

    ann.goto(console["url"] + "/calls/")
    ann.locator("[data-recent] a", has_text=":").first.click()
    expect(ann.locator("[data-progress]")).to_be_visible()
    expect(ann.locator("[data-progress-text]")).to_contain_text("Exported")
    assert not client.answer().is_error
    expect(ann.locator("[data-outcome]")).to_contain_text("completed")
