"""An operator answers, in Chromium, what upstream servers ask in the middle of calls an MCP client is waiting on.

server-everything asks in the legacy era (elicitation/create on the call's stream),
the official-SDK servers in 2026-07-28 (input_required through Resolve/Elicit); the
operator sees one form either way, pushed live into the queue.
"""

import json
import re
import shlex
import sys

import pytest
from playwright.sync_api import expect

from approvals import roles
from approvals.policy.models import PolicyRule
from approvals.tokens import credentials
from tests.browser.queue_pages import ClientCall
from tests.fixtures.servers import SERVERS

pytestmark = pytest.mark.browser


@pytest.fixture
def console(live_console, transactional_db, everything_http, sdk_server, person, add_fixed_server):
    """Three upstream servers that elicit, every call allowed, a client token and an operator's session cookie."""
    PolicyRule.objects.create(name="browser inputs", action="allow", tool_glob="*")
    add_fixed_server("everything", transport="http", url=everything_http.url)
    add_fixed_server("sdk", transport="http", url=sdk_server.url)
    add_fixed_server("forms", transport="stdio", command=shlex.join([sys.executable, str(SERVERS / "forms_server.py")]))
    _, secret = credentials.create_token("browser agent")
    _, browser_client = person("olga", roles.OPERATOR)
    return {
        "url": live_console,
        "mcp": live_console + "/mcp",
        "secret": secret,
        "session": browser_client.cookies["sessionid"].value,
    }


@pytest.fixture
def queue(console, open_browser):
    context = open_browser().new_context(viewport={"width": 1280, "height": 1000})
    context.add_cookies([{"name": "sessionid", "value": console["session"], "url": console["url"]}])
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(console["url"] + "/queue/")
    expect(page.locator("body")).to_have_attribute("data-live", "connected")
    return page


def call(console, name, arguments) -> ClientCall:
    return ClientCall(console["mcp"], console["secret"], name, arguments)


def card_of(page, text):
    """The request asking `text`, opened: a row of the queue, selected like a call, whose card the panel shows."""
    row = page.locator("[data-inputs] [data-input-row]", has_text=text)
    expect(row.locator("[data-kind]")).to_be_visible()
    row.locator(".row-main").click()
    expect(row).to_have_class(re.compile(r"\bselected\b"))
    return page.locator("[data-queue-pane] [data-input-card]", has_text=text)


def test_it_shows_server_everythings_legacy_form_and_sends_back_what_the_operator_filled_in(console, queue):
    client = call(console, "everything_trigger-elicitation-request", {})
    card = card_of(queue, "Please provide inputs for the following fields")
    expect(card).to_contain_text("everything asks for input")
    expect(card.get_by_label("String with default", exact=True)).to_have_value("It was a dark and stormy night.")
    expect(card.get_by_label("Integer", exact=True)).to_have_value("42")
    expect(card.get_by_label("Integer", exact=True)).to_have_attribute("max", "100")
    expect(card.get_by_label("Untitled Single Select Enum", exact=True)).to_have_value("Monica")
    expect(card.get_by_label("Titled Single Select Enum", exact=True)).to_have_value("hero-1")
    expect(card.get_by_label("Legacy Titled Single Select Enum", exact=True).locator("option:checked")).to_have_text(
        "Cats"
    )
    expect(card.get_by_label("Guitar", exact=True)).to_be_checked()
    expect(card.get_by_label("Tuna", exact=True)).to_be_checked()
    expect(card.locator("label", has_text="String").first.locator("xpath=following-sibling::*[1]")).to_have_text(
        "required"
    )
    expect(card.get_by_label("String with date format", exact=True)).to_have_attribute("type", "date")
    expect(card.get_by_label("String with email format", exact=True)).to_have_attribute("type", "email")
    expect(card.get_by_label("String with uri format", exact=True)).to_have_attribute("type", "url")

    card.get_by_label("Integer", exact=True).fill("500")
    assert card.get_by_label("Integer", exact=True).evaluate("input => input.validity.rangeOverflow")
    card.get_by_label("Integer", exact=True).fill("7")
    card.get_by_label("String", exact=True).fill("Ada Lovelace")
    card.get_by_label("Boolean", exact=True).select_option("true")
    card.get_by_label("String with email format", exact=True).fill("ada@example.com")
    card.get_by_label("String with uri format", exact=True).fill("https://ada.example")
    card.get_by_label("String with date format", exact=True).fill("1815-12-10")
    card.get_by_label("Titled Single Select Enum", exact=True).select_option(label="Wonder Woman")
    for instrument in ("Piano", "Violin", "Drums"):
        card.get_by_label(instrument).check()
    card.get_by_role("button", name="Accept").click()

    # Four instruments is one more than maxItems allows: the server says so and keeps what was typed.
    expect(queue.locator(".error-text")).to_contain_text("Choose at most 3.")
    form = queue.locator("[data-input-card]")
    expect(form.get_by_label("String", exact=True)).to_have_value("Ada Lovelace")
    form.get_by_label("Drums", exact=True).uncheck()
    form.get_by_role("button", name="Accept").click()
    expect(queue.locator("[data-queue-log]")).to_contain_text(re.compile(r"Input request \d+: Answered\. · view"))

    text = client.text()
    assert "User provided the requested information" in text
    for line in (
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Email: ada@example.com",
        "- Birthdate: 1815-12-10",
        "- Favorite Integer: 7",
    ):
        assert line in text
    raw = json.loads(text.split("Raw result:", 1)[1])
    assert raw["content"]["untitledMultipleSelectEnum"] == ["Guitar", "Piano", "Violin"]
    assert raw["content"]["titledSingleSelectEnum"] == "hero-3" and raw["content"]["number"] == 3.14


def test_it_shows_the_2026_sdk_servers_question_and_the_answer_completes_the_call(console, queue):
    client = call(console, "sdk_delete_record", {"target": "r1"})
    # A row of the list with its own badge, which j selects as it would a call.
    row = queue.locator("[data-inputs] [data-input-row]", has_text="Really delete r1?")
    expect(row.locator("[data-kind]")).to_have_text("input")
    queue.keyboard.press("j")
    expect(row).to_have_class(re.compile(r"\bselected\b"))
    expect(queue.locator("[data-queue-pane] [data-input-card]")).to_contain_text("Really delete r1?")
    card = card_of(queue, "Really delete r1?")
    expect(card).to_contain_text("sdk asks for input")
    expect(card).to_contain_text("sdk_delete_record")
    card.get_by_label("Confirm", exact=True).check()
    card.get_by_role("button", name="Accept").click()
    assert client.text() == "deleted r1"
    expect(queue.locator("[data-input-row]", has_text="Really delete r1?")).to_have_count(0)


@pytest.mark.parametrize("button, said", [("Decline", "decline"), ("Cancel", "cancel")])
def test_it_tells_the_server_that_the_operator_declined_or_cancelled(console, queue, button, said):
    client = call(console, "sdk_delete_record", {"target": "r2"})
    card = card_of(queue, "Really delete r2?")
    card.get_by_role("button", name=button).click()
    assert client.text() == f"kept r2 ({said})"


def test_it_keeps_an_answer_that_did_not_go_on_the_panel_and_sends_it_again(console, queue):
    client = call(console, "sdk_delete_record", {"target": "r3"})
    card = card_of(queue, "Really delete r3?")
    answer = re.compile(r"/inputs/\d+/answer/")
    queue.route(answer, lambda route: route.abort())
    card.get_by_role("button", name="Decline").click()
    unsent = card.locator("[data-unsent]")
    expect(unsent).to_contain_text("Not sent")
    expect(queue).to_have_url(re.compile(r"/queue/$"))
    queue.unroute(answer)
    unsent.get_by_role("button", name="retry").click()
    assert client.text() == "kept r3 (decline)"
    expect(queue.locator("[data-queue-log]")).to_contain_text(re.compile(r"Input request \d+: Declined\. · view"))
    expect(queue).to_have_url(re.compile(r"/queue/$"))


def test_it_shows_what_the_server_refused_in_the_form_without_leaving_the_queue(console, queue):
    client = call(console, "forms_fill_profile", {"who": "Ada"})
    card = card_of(queue, "Tell us about Ada.")
    # What the browser would stop, the server checks too: the form comes back with its errors, in place.
    card.locator("[data-input-form]").evaluate("form => { form.noValidate = true; }")
    card.get_by_label("Full name", exact=True).fill("A")
    card.get_by_role("button", name="Accept").click()
    expect(card).to_contain_text("The answer was not sent")
    expect(card.locator(".field.invalid").first).to_contain_text("Full name")
    expect(queue).to_have_url(re.compile(r"/queue/$"))
    card.get_by_role("button", name="Decline").click()
    assert client.text() == "no profile (decline)"


def test_it_renders_and_checks_every_field_type_an_sdk_server_asks_for(console, queue):
    client = call(console, "forms_fill_profile", {"who": "Ada"})
    card = card_of(queue, "Tell us about Ada.")
    name = card.get_by_label("Full name", exact=True)
    expect(name).to_have_attribute("maxlength", "40")
    expect(name).to_have_attribute("minlength", "2")
    expect(card.get_by_label("First meeting", exact=True)).to_have_attribute("type", "datetime-local")
    expect(card.get_by_label("Score", exact=True)).to_have_value("9.5")
    expect(card.get_by_label("I agree to the terms", exact=True)).to_be_checked()
    expect(card.get_by_label("Pet", exact=True).locator("option")).to_have_text(["—", "Cats", "Dogs"])
    name.fill("Ada Lovelace")
    card.get_by_label("Email", exact=True).fill("ada@example.com")
    card.get_by_label("Homepage", exact=True).fill("https://ada.example")
    card.get_by_label("Date of birth", exact=True).fill("1815-12-10")
    card.get_by_label("First meeting", exact=True).fill("2030-01-02T09:30:15")
    card.get_by_label("Age", exact=True).fill("36")
    card.get_by_label("I agree to the terms", exact=True).uncheck()
    card.get_by_label("Colour", exact=True).select_option("blue")
    card.get_by_label("Pet", exact=True).select_option(label="Dogs")
    card.get_by_label("Hero", exact=True).select_option(label="Batman")
    card.get_by_label("file", exact=True).check()
    card.get_by_label("Trout", exact=True).check()
    card.get_by_role("button", name="Accept").click()

    assert json.loads(client.text()) == {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "homepage": "https://ada.example",
        "born": "1815-12-10",
        "meeting": "2030-01-02T09:30:15Z",
        "age": 36,
        "score": 9.5,
        "agree": False,
        "color": "blue",
        "pet": "dog",
        "hero": "h2",
        "tools": ["file"],
        "fish": ["f1", "f2"],
    }


def test_it_shows_a_url_with_its_domain_and_never_opens_it_itself(console, queue):
    url = "https://accounts.example.com/authorize?client=console&step=2"
    client = call(console, "everything_trigger-url-elicitation", {"url": url, "message": "Sign in to continue"})
    card = card_of(queue, "Sign in to continue")
    expect(card).to_contain_text("asks someone to open a link")
    expect(card.locator("[data-input-url]")).to_have_text(url)
    expect(card.locator("[data-input-domain]")).to_have_text("accounts.example.com")
    card.get_by_role("button", name="I completed it").click()
    assert "User completed the URL elicitation flow" in client.text()


def test_it_shows_server_everythings_sampling_request_and_sends_the_operators_reply_as_the_model(console, queue):
    client = call(console, "everything_trigger-sampling-request", {"prompt": "Name a <b>colour</b>", "maxTokens": 30})
    card = card_of(queue, "Name a <b>colour</b>")
    expect(card).to_contain_text("everything asks a language model for a reply")
    expect(card.locator('[data-sampling-role="user"]')).to_contain_text(
        "Resource trigger-sampling-request context: Name a <b>colour</b>"
    )
    expect(card.locator("[data-sampling-system]")).to_have_text("You are a helpful test server.")
    expect(card.locator("[data-sampling-max-tokens]")).to_have_text("30 tokens")
    expect(card.get_by_role("button", name="Cancel")).to_have_count(0)

    card.get_by_role("button", name="Send reply").click()
    expect(queue.locator(".message.error")).to_contain_text("Write the reply the model would give, or decline.")
    form = queue.locator("[data-input-card]")
    form.get_by_label("Your reply, in the model's place").fill("Teal.")
    form.get_by_role("button", name="Send reply").click()
    expect(queue.locator("[data-queue-log]")).to_contain_text(re.compile(r"Input request \d+: Answered\. · view"))

    sampled = json.loads(client.text().partition("\n")[2])
    assert sampled["content"] == {"type": "text", "text": "Teal."}
    assert (sampled["model"], sampled["role"]) == ("operator:olga", "assistant")


def test_it_tells_server_everything_the_operator_declined_to_sample(console, queue):
    client = call(console, "everything_trigger-sampling-request", {"prompt": "Anything"})
    card_of(queue, "Anything").get_by_role("button", name="Decline").click()
    result = client.answer()
    assert result.is_error and "User rejected sampling request" in client.text()
