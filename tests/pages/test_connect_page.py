import json
import re
import shlex
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from approvals.display import snippets
from approvals.tokens import credentials
from approvals.tokens.models import ClientToken

REPO = Path(__file__).resolve().parents[2]
README_URL = "https://console.example.com/mcp"
FROM_ENV = "Bearer ${APPROVAL_CONSOLE_TOKEN}"


def connect_page(client):
    return client.get(reverse("connect")).content.decode()


def by_key(url, token=None):
    return {s.key: s.text for s in snippets.snippets(url, token)}


def test_it_sends_an_anonymous_visitor_to_the_login_page(client, db):
    response = client.get(reverse("connect"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ["operator", "auditor", "admin"])
def test_it_shows_every_signed_in_role_the_endpoint_built_from_the_request(login, role):
    page = connect_page(login(role))
    assert '<code id="endpoint">http://testserver/mcp</code>' in page


@override_settings(OAUTH_SERVER=False)
def test_it_shows_a_snippet_for_each_client_with_the_url_and_a_placeholder(operator_client):
    page = connect_page(operator_client)
    for client_name in ("Claude Code", "Claude Desktop", "Cursor", "VS Code"):
        assert f"<h2>{client_name}</h2>" in page
    assert page.count("http://testserver/mcp") >= 5
    assert "export APPROVAL_CONSOLE_TOKEN=&lt;token&gt;" in page and page.count("Bearer &lt;token&gt;") == 1


def test_it_gives_each_snippet_a_copy_button_that_only_the_script_reveals(operator_client):
    page = connect_page(operator_client)
    for key in ("claude-code", "claude-desktop", "cursor", "vscode"):
        assert f'<button type="button" class="button copy" data-copy="snippet-{key}" hidden>' in page
    assert not re.search(r"<script(?![^>]*\bsrc=)", page), "the CSP forbids inline script"


def test_it_offers_an_operator_no_token_button(operator_client):
    page = connect_page(operator_client)
    assert "Create a token for this" not in page and "Ask an admin" in page


def test_it_refuses_an_operator_who_posts_for_a_token(operator_client):
    response = operator_client.post(reverse("connect"), {"name": "sneaky", "tool_globs": "*"})
    assert response.status_code == 403
    assert not ClientToken.objects.exists()


def test_it_creates_a_token_on_the_spot_and_fills_it_into_every_snippet(admin_client):
    assert "Create a token for this" in connect_page(admin_client)
    response = admin_client.post(reverse("connect"), {"name": "alice-laptop", "tool_globs": "*"})
    secret = response.context["secret"]
    page = response.content.decode()
    assert credentials.authenticate(secret).name == "alice-laptop"
    assert f"export APPROVAL_CONSOLE_TOKEN={secret}" in page and f"Bearer {secret}" in page
    assert page.count(secret) == 3 and "&lt;token&gt;" not in page, (
        "the secret shown once, the variable, Desktop's file"
    )
    assert "only time the secret is shown" in page
    assert "no-store" in response["Cache-Control"]


@override_settings(OAUTH_SERVER=False)
def test_the_secret_is_gone_from_the_page_on_the_next_visit(admin_client):
    secret = admin_client.post(reverse("connect"), {"name": "alice-laptop"}).context["secret"]
    page = connect_page(admin_client)
    assert secret not in page and "Bearer &lt;token&gt;" in page


def test_the_secret_is_gone_beside_oauth_too(admin_client):
    secret = admin_client.post(reverse("connect"), {"name": "alice-laptop"}).context["secret"]
    page = connect_page(admin_client)
    assert secret not in page and "APPROVAL_CONSOLE_TOKEN" in page


@override_settings(OAUTH_SERVER=False)
def test_it_shows_the_errors_and_no_secret_when_the_token_cannot_be_made(admin_client):
    credentials.create_token("alice-laptop")
    response = admin_client.post(reverse("connect"), {"name": "alice-laptop", "tool_globs": "*"})
    page = response.content.decode()
    assert "exists already" in page and response.context["secret"] is None
    assert "export APPROVAL_CONSOLE_TOKEN=&lt;token&gt;" in page


def test_the_claude_code_command_splits_into_the_right_arguments_leaving_the_variable_to_claude_code():
    argv = shlex.split(by_key(README_URL, "mcpc_abc")["claude-code"])
    assert argv == [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        "approval-console",
        README_URL,
        "--header",
        "Authorization: " + FROM_ENV,
    ]


def test_claude_desktop_reaches_the_console_through_the_mcp_remote_bridge():
    config = json.loads(by_key(README_URL, "mcpc_abc")["claude-desktop"])["mcpServers"]["approval-console"]
    assert config["command"] == "npx" and config["args"][:3] == ["-y", "mcp-remote", README_URL]
    # No space inside an argument: some Claude Desktop builds split arguments at spaces.
    assert config["args"][3:] == ["--header", "Authorization:${AUTH_HEADER}"]
    assert config["env"] == {"AUTH_HEADER": "Bearer mcpc_abc"}


@pytest.mark.parametrize(
    "url, allowed",
    [
        ("http://console.internal:8000/mcp", True),
        ("http://127.0.0.1:8000/mcp", False),
        ("http://localhost:8000/mcp", False),
        ("https://console.example.com/mcp", False),
    ],
)
def test_claude_desktop_allows_plain_http_only_where_mcp_remote_needs_it(url, allowed):
    args = json.loads(by_key(url)["claude-desktop"])["mcpServers"]["approval-console"]["args"]
    assert ("--allow-http" in args) is allowed


def test_cursor_reads_the_token_from_the_environment_and_vs_code_prompts_for_it():
    texts = by_key(README_URL, "mcpc_abc")
    cursor = json.loads(texts["cursor"])["mcpServers"]["approval-console"]
    vscode = json.loads(texts["vscode"])
    assert cursor == {"url": README_URL, "headers": {"Authorization": "Bearer ${env:APPROVAL_CONSOLE_TOKEN}"}}
    assert vscode["inputs"] == [
        {"type": "promptString", "id": "approval-console-token", "description": "Client token", "password": True}
    ]
    assert vscode["servers"]["approval-console"] == {
        "type": "http",
        "url": README_URL,
        "headers": {"Authorization": "Bearer ${input:approval-console-token}"},
    }
    assert "mcpc_abc" not in texts["cursor"] + texts["vscode"] + texts["claude-code"]


def test_the_docs_show_the_same_snippets_as_the_page_and_the_readme_those_for_claude_code():
    guide = (REPO / "docs" / "connecting-clients.md").read_text()
    for snippet in [*snippets.snippets(README_URL), *snippets.snippets(README_URL, oauth=True)]:
        assert snippet.text in guide, f"the guide's {snippet.client} snippet differs from approvals/display/snippets.py"
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Connecting a client") :]
    for key in ("environment", "claude-code"):
        assert by_key(README_URL)[key] in section[: section.index("\n## ", 3)]


def test_it_gives_claude_code_the_permission_prompt_tool_with_the_console_and_the_tokens_variable():
    argv = shlex.split(by_key(README_URL, "mcpc_abc")["claude-code-permissions"])
    assert argv[:2] == ["claude", "-p"]
    assert argv[argv.index("--permission-prompt-tool") + 1] == "mcp__approval-console__approval_prompt"
    config = json.loads(argv[argv.index("--mcp-config") + 1])
    assert config == {
        "mcpServers": {"approval-console": {"type": "http", "url": README_URL, "headers": {"Authorization": FROM_ENV}}}
    }


def test_it_gives_clients_that_sign_in_by_oauth_the_url_alone(operator_client):
    page = connect_page(operator_client)
    texts = {s.key: s.text for s in snippets.snippets("http://testserver/mcp", oauth=True)}

    assert "press <strong>Allow</strong>" in page
    assert "<h2>Claude and Claude Desktop</h2>" in page
    assert texts["claude-connector"] == "http://testserver/mcp"
    assert texts["claude-code"] == "claude mcp add --transport http approval-console http://testserver/mcp"
    assert json.loads(texts["cursor"]) == {"mcpServers": {"approval-console": {"url": "http://testserver/mcp"}}}
    vscode = {"servers": {"approval-console": {"type": "http", "url": "http://testserver/mcp"}}}
    assert json.loads(texts["vscode"]) == vscode
    bridge = json.loads(texts["claude-desktop"])["mcpServers"]["approval-console"]
    assert bridge == {"command": "npx", "args": ["-y", "mcp-remote", "http://testserver/mcp", "--allow-http"]}
    # Only what cannot sign in in a browser still needs a token: headless Claude Code, the SDK, the Inspector's CLI.
    needing_a_token = ["claude-code-permissions", "python-sdk", "inspector"]
    assert [key for key, text in texts.items() if "Bearer" in text] == needing_a_token
    assert page.count("Bearer ${APPROVAL_CONSOLE_TOKEN}") == 1


def test_it_fills_a_new_token_into_every_snippet_even_beside_oauth(admin_client):
    response = admin_client.post(reverse("connect"), {"name": "ci-agent", "tool_globs": "*"})

    secret = response.context["secret"]
    shown = [snippet.key for snippet in response.context["snippets"]]
    assert shown == [snippet.key for snippet in snippets.snippets("http://testserver/mcp", secret)]
    assert f"export APPROVAL_CONSOLE_TOKEN={secret}" in response.content.decode()


def test_it_makes_a_token_from_the_connect_page_expire_in_30_days_unless_told_otherwise(admin_client):
    assert '<option value="30d" selected>in 30 days</option>' in connect_page(admin_client)
    admin_client.post(reverse("connect"), {"name": "trying-cursor", "tool_globs": "*"})
    admin_client.post(reverse("connect"), {"name": "lasting", "tool_globs": "*", "expires": ""})

    trying = ClientToken.objects.get(name="trying-cursor")
    assert timedelta(days=29) < trying.expires_at - timezone.now() <= timedelta(days=30)
    assert ClientToken.objects.get(name="lasting").expires_at is None
