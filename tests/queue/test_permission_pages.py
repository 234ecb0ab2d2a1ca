"""Permission requests in the queue, on their page and on the edit page: each shown for what it asks to do."""

import pytest
from django.urls import reverse

from approvals import roles
from approvals.calls import deciding, permissions
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext

HOSTILE = '<img src=x onerror=alert(1)><script>alert("pwned")</script>'


@pytest.fixture
def ask(client_token):
    def pending(tool_name, tool_input):
        ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
        call, answer = permissions.receive_permission(ctx, tool_name, tool_input, "toolu_1", 1, None)
        assert answer is None and call.status == Call.Status.PENDING
        return call

    return pending


@pytest.fixture
def operator_page(person):
    _, client = person("ann", roles.OPERATOR)
    return client


def queue_html(client) -> str:
    response = client.get(reverse("queue"))
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_a_shell_command_with_its_description(ask, operator_page):
    ask("Bash", {"command": "pytest -x tests/", "description": "Run the tests"})

    html = queue_html(operator_page)

    assert 'data-permission="command"' in html
    assert '<pre class="code permission-command" tabindex="0" data-command>pytest -x tests/</pre>' in html
    assert "Run the tests" in html
    assert "The tool&#x27;s definition changed" not in html and "The tool's definition changed" not in html


def test_it_shows_a_file_edit_as_the_path_and_a_diff(ask, operator_page):
    ask("Edit", {"file_path": "/src/app.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 1\ny = 3\n"})

    html = queue_html(operator_page)

    assert 'data-permission="edit"' in html and "<code data-path>/src/app.py</code>" in html
    assert '<span class="diff-line diff-del">-y = 2</span>' in html
    assert '<span class="diff-line diff-add">+y = 3</span>' in html
    assert '<span class="diff-line diff-same"> x = 1</span>' in html


def test_it_shows_each_edit_of_a_multi_edit(ask, operator_page):
    edits = [{"old_string": "alpha", "new_string": "beta"}, {"old_string": "gamma", "new_string": "delta"}]
    ask("MultiEdit", {"file_path": "/src/app.py", "edits": edits})

    html = queue_html(operator_page)

    assert html.count("data-diff>") == 2
    assert "+beta" in html and "-gamma" in html


def test_it_shows_a_write_as_the_path_and_the_content(ask, operator_page):
    ask("Write", {"file_path": "/src/new.py", "content": "print('hello')\n"})

    html = queue_html(operator_page)

    assert 'data-permission="write"' in html and "<code data-path>/src/new.py</code>" in html
    assert "print(&#x27;hello&#x27;)" in html


def test_it_shows_any_other_tool_as_its_input_tree(ask, operator_page):
    ask("WebFetch", {"url": "https://example.com/", "prompt": "Summarise the page"})

    html = queue_html(operator_page)

    assert 'data-permission="tree"' in html
    assert "https://example.com/" in html and "Summarise the page" in html


def test_it_escapes_markup_from_the_agent(ask, operator_page):
    ask("Bash", {"command": f"echo '{HOSTILE}'", "description": HOSTILE})
    ask("Edit", {"file_path": HOSTILE, "old_string": HOSTILE, "new_string": "safe"})
    ask(HOSTILE[:40], {"x": HOSTILE})

    html = queue_html(operator_page)

    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_it_cuts_a_huge_input_to_a_bound(ask, operator_page):
    huge = "A" * 300_000
    call = ask("Write", {"file_path": "/big.txt", "content": huge})

    html = queue_html(operator_page)

    assert "A" * 20_000 in html and "A" * 20_001 not in html
    assert "280000 more characters not shown." in html
    page = operator_page.get(reverse("call", args=[call.pk]))
    assert page.status_code == 200


def test_the_edit_page_offers_the_command_as_a_field_and_approves_the_edit(ask, operator_page):
    call = ask("Bash", {"command": "rm -r build", "description": "Clean"})

    page = operator_page.get(reverse("call_edit", args=[call.pk]))
    assert page.status_code == 200
    assert "Command" in page.content.decode()
    binding = page.context["editor"].binding
    response = operator_page.post(
        reverse("call_edit", args=[call.pk]),
        {"binding": binding, "arg-command": "rm -r build/tmp", "arg-description": "Clean", "reason": ""},
    )

    assert response.status_code == 302
    call.refresh_from_db()
    assert call.status == Call.Status.APPROVED
    assert call.edited_arguments == {"command": "rm -r build/tmp", "description": "Clean"}


def test_its_page_shows_what_the_agent_asked_and_what_the_operator_allowed(ask, operator_page, operator):
    call = ask("Bash", {"command": "make deploy", "description": "Deploy"})
    deciding.decide(call.pk, operator, True, edited_arguments={"command": "make deploy-staging"})

    html = operator_page.get(reverse("call", args=[call.pk])).content.decode()

    assert "What the agent may do, as an operator edited it" in html
    assert '<pre class="code permission-command" tabindex="0" data-command>make deploy-staging</pre>' in html
    assert "Input as the agent sent it" in html and "make deploy" in html
