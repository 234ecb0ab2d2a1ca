"""Ready-to-paste configuration that points an MCP client at the console's endpoint: with a client token,
or, for clients that sign in by OAuth to the console's authorization server, with the URL alone.

The Connect page and the README's "Connecting a client" show these same texts;
a test keeps the README in step with them.
"""

import json
import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from approvals.protocol import permission_prompt

SERVER_NAME = "approval-console"
TOKEN_PLACEHOLDER = "<token>"
# The hosts mcp-remote itself lets through over plain http (it does not count [::1]).
LOOPBACK = {"localhost", "127.0.0.1"}


@dataclass(frozen=True)
class Snippet:
    key: str
    client: str
    where: str
    text: str
    note: str = ""


def snippets(url: str, token: str | None = None, oauth: bool = False) -> list[Snippet]:
    """With `oauth` and no token, the shortest setup: the URL alone for each client that signs in by OAuth."""
    if oauth and token is None:
        return oauth_snippets(url)
    return token_snippets(url, token or TOKEN_PLACEHOLDER)


def oauth_snippets(url: str) -> list[Snippet]:
    return [
        Snippet(
            "claude-connector",
            "Claude and Claude Desktop",
            "Settings → Connectors → Add custom connector",
            url,
            "Claude's connectors reach the console from Anthropic's cloud, so it must be reachable there at this "
            "URL, over https.",
        ),
        Snippet(
            "claude-code",
            "Claude Code",
            "a shell",
            f"claude mcp add --transport http {SERVER_NAME} {shlex.quote(url)}",
            "Then run /mcp in Claude Code and choose it to sign in. Add --scope user to use it in every project.",
        ),
        permission_snippet(url, f"Bearer {TOKEN_PLACEHOLDER}"),
        Snippet(
            "claude-desktop",
            "Claude Desktop, bridged",
            "claude_desktop_config.json (Settings → Developer → Edit Config)",
            as_json(
                {"mcpServers": {SERVER_NAME: {"command": "npx", "args": ["-y", "mcp-remote", url, *allow_http(url)]}}}
            ),
            "Only where Claude's connectors cannot reach the console, as on a private network: the mcp-remote "
            "bridge (Node.js 18 or newer) runs on your machine and signs in the same way. Restart Claude Desktop "
            "after saving.",
        ),
        Snippet(
            "cursor",
            "Cursor",
            ".cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project",
            as_json({"mcpServers": {SERVER_NAME: {"url": url}}}),
        ),
        Snippet(
            "vscode",
            "VS Code",
            ".vscode/mcp.json in the workspace",
            as_json({"servers": {SERVER_NAME: {"type": "http", "url": url}}}),
        ),
    ]


def token_snippets(url: str, secret: str) -> list[Snippet]:
    bearer = f"Bearer {secret}"
    return [
        Snippet(
            "claude-code",
            "Claude Code",
            "a shell",
            f'claude mcp add --transport http {SERVER_NAME} {shlex.quote(url)} --header "Authorization: {bearer}"',
            "Add --scope user to use it in every project; the default scope is this project, for you alone.",
        ),
        permission_snippet(url, bearer),
        Snippet(
            "claude-desktop",
            "Claude Desktop",
            "claude_desktop_config.json (Settings → Developer → Edit Config)",
            as_json(
                {
                    "mcpServers": {
                        SERVER_NAME: {
                            "command": "npx",
                            "args": [
                                "-y",
                                "mcp-remote",
                                url,
                                "--header",
                                "Authorization:${AUTH_HEADER}",
                                *allow_http(url),
                            ],
                            "env": {"AUTH_HEADER": bearer},
                        }
                    }
                }
            ),
            # Some Claude Desktop builds split arguments at spaces: the header's value travels in the environment.
            "This file takes local (stdio) servers only, and Claude Desktop's remote connectors sign in with OAuth "
            "and send no custom header; so the mcp-remote bridge (Node.js 18 or newer) carries the calls to the "
            "console. Restart Claude Desktop after saving.",
        ),
        Snippet(
            "cursor",
            "Cursor",
            ".cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project",
            as_json({"mcpServers": {SERVER_NAME: {"url": url, "headers": {"Authorization": bearer}}}}),
            "Keep a file that holds a token out of version control.",
        ),
        Snippet(
            "vscode",
            "VS Code",
            ".vscode/mcp.json in the workspace",
            as_json({"servers": {SERVER_NAME: {"type": "http", "url": url, "headers": {"Authorization": bearer}}}}),
            "Keep a file that holds a token out of version control.",
        ),
    ]


def permission_snippet(url: str, bearer: str) -> Snippet:
    """Headless Claude Code cannot sign in in a browser: it carries a client token even beside OAuth."""
    return Snippet(
        "claude-code-permissions",
        "Claude Code asking operators for permission",
        "a shell, to run Claude Code headless with its permission prompts in the queue",
        permission_prompt_command(url, bearer),
        f"Each tool use the agent would ask you about waits here as a permission request. The token must "
        f"allow the tool {permission_prompt.NAME}; rules for permission requests allow, deny or ask by the "
        "agent's tool (Bash, Edit, Read...) and its input.",
    )


def permission_prompt_command(url: str, bearer: str) -> str:
    config = {"mcpServers": {SERVER_NAME: {"type": "http", "url": url, "headers": {"Authorization": bearer}}}}
    return shlex.join(
        [
            "claude",
            "-p",
            "--mcp-config",
            json.dumps(config, separators=(",", ":")),
            "--permission-prompt-tool",
            f"mcp__{SERVER_NAME}__{permission_prompt.NAME}",
            "Fix the failing tests",
        ]
    )


def allow_http(url: str) -> list[str]:
    parts = urlsplit(url)
    return ["--allow-http"] if parts.scheme == "http" and parts.hostname not in LOOPBACK else []


def as_json(value) -> str:
    return json.dumps(value, indent=2)
