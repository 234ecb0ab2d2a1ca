"""An operator edits a coding agent's shell command in Chromium and allows it; the agent reads the edited input."""

import json

import pytest
from playwright.sync_api import expect

from approvals import roles
from tests.browser.queue_pages import ClientCall, one_operator_console, pick, queue_page

pytestmark = pytest.mark.browser


@pytest.fixture
def console(live_console, transactional_db, person):
    """A token for the agent, and the session cookie of operator ann."""
    return one_operator_console(live_console, person, "coding agent")


def test_an_operator_edits_the_command_then_allows_it_and_the_agent_reads_the_edit(console, open_browser):
    ann = queue_page(open_browser(), console, "ann")
    asking = {"command": "rm -r build", "description": "Clean the build directory"}
    agent = ClientCall(console["mcp"], console["secret"], "approval_prompt", {"tool_name": "Bash", "input": asking})

    detail = pick(ann, "Bash")
    expect(detail.locator("[data-command]")).to_have_text("rm -r build")
    expect(detail).to_contain_text("Clean the build directory")
    expect(detail.get_by_role("link", name="Always allow calls like this")).to_have_count(0)
    detail.get_by_role("link", name="Edit then approve").click()
    ann.get_by_label("Command").fill("rm -r build/tmp")
    ann.get_by_role("button", name="Approve with these arguments").click()
    expect(ann.locator(".message.success")).to_contain_text("Approved with edited arguments")

    answer = agent.answer()
    assert not answer.is_error
    edited = {"command": "rm -r build/tmp", "description": "Clean the build directory"}
    assert json.loads(agent.text()) == {"behavior": "allow", "updatedInput": edited}


def test_the_rule_form_suggests_the_input_paths_of_an_agents_tool_for_a_permission_rule(console, person, open_browser):
    _, admin = person("pat", roles.ADMIN)
    context = open_browser().new_context()
    context.add_cookies([{"name": "sessionid", "value": admin.cookies["sessionid"].value, "url": console["url"]}])
    page = context.new_page()
    page.goto(console["url"] + "/policy/rules/new/")

    page.get_by_label("Permission requests from coding agents").check()
    page.get_by_label("Tools").fill("Bash")
    page.get_by_role("button", name="Add condition").click()

    paths = ["command", "description", "run_in_background", "timeout"]
    expect(page.locator("#argument-paths option")).to_have_text(paths)
