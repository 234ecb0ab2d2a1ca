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
# Where Claude Code and Cursor read the token at start-up, and what VS Code's own prompt for it is called.
TOKEN_VARIABLE = "APPROVAL_CONSOLE_TOKEN"
TOKEN_INPUT = "approval-console-token"
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
        permission_snippet(url),
        python_sdk_snippet(url),
        inspector_snippet(url),
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
    """Where a client can read the token from its environment or ask for it itself, the snippet names the variable
    or the prompt rather than the token, so the token never sits in a file or a shell's history."""
    from_env = f"Bearer ${{{TOKEN_VARIABLE}}}"
    return [
        Snippet(
            "environment",
            "The token, for the clients that read it from the environment",
            "the shell, or the profile, that starts Claude Code or Cursor",
            f"export {TOKEN_VARIABLE}={secret}",
            "Claude Code and Cursor read it each time they start, so the files below hold no secret; VS Code asks "
            "for the token itself and keeps it in its secret storage.",
        ),
        Snippet(
            "claude-code",
            "Claude Code",
            "a shell",
            shlex.join(["claude", "mcp", "add", "--transport", "http", SERVER_NAME, url, "--header"])
            + f" {shlex.quote('Authorization: ' + from_env)}",
            "Add --scope user to use it in every project; the default scope is this project, for you alone. The "
            "single quotes keep the variable for Claude Code to read as it starts.",
        ),
        permission_snippet(url),
        python_sdk_snippet(url),
        inspector_snippet(url),
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
                            "env": {"AUTH_HEADER": f"Bearer {secret}"},
                        }
                    }
                }
            ),
            # Some Claude Desktop builds split arguments at spaces: the header's value travels in the environment.
            "This file takes local (stdio) servers only, and Claude Desktop's remote connectors sign in with OAuth "
            "and send no custom header; so the mcp-remote bridge (Node.js 18 or newer) carries the calls to the "
            "console. It reads no variable of yours: the token sits in this file. Restart Claude Desktop after saving.",
        ),
        Snippet(
            "cursor",
            "Cursor",
            ".cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project",
            as_json(
                {
                    "mcpServers": {
                        SERVER_NAME: {"url": url, "headers": {"Authorization": f"Bearer ${{env:{TOKEN_VARIABLE}}}"}}
                    }
                }
            ),
        ),
        Snippet(
            "vscode",
            "VS Code",
            ".vscode/mcp.json in the workspace",
            as_json(
                {
                    "inputs": [
                        {"type": "promptString", "id": TOKEN_INPUT, "description": "Client token", "password": True}
                    ],
                    "servers": {
                        SERVER_NAME: {
                            "type": "http",
                            "url": url,
                            "headers": {"Authorization": f"Bearer ${{input:{TOKEN_INPUT}}}"},
                        }
                    },
                }
            ),
            "VS Code asks for the token the first time it starts the server.",
        ),
    ]


def permission_snippet(url: str) -> Snippet:
    """Headless Claude Code signs in nowhere: it reads a client token from the environment, beside OAuth too."""
    return Snippet(
        "claude-code-permissions",
        "Claude Code asking operators for permission",
        "a shell, to run Claude Code headless with its permission prompts in the queue",
        permission_prompt_command(url, f"Bearer ${{{TOKEN_VARIABLE}}}"),
        f"Each tool use the agent would ask you about waits here as a permission request. The token must "
        f"allow the tool {permission_prompt.NAME}; rules for permission requests allow, deny or ask by the "
        f"agent's tool (Bash, Edit, Read...) and its input. It reads the token from {TOKEN_VARIABLE}.",
    )


PYTHON_SDK = """import asyncio
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = {url}
# A call the policy sends to an operator waits for the decision: allow reads that long.
TIMEOUT = httpx2.Timeout(30.0, read=300.0)


async def main():
    headers = {{"Authorization": f"Bearer {{os.environ['{variable}']}}"}}
    async with httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as client:
            listed = await client.list_tools()
            for tool in listed.tools:
                print(tool.name)


asyncio.run(main())
"""


def python_sdk_snippet(url: str) -> Snippet:
    """Code of one's own sends the token it reads from the environment, beside OAuth too, as headless clients do."""
    return Snippet(
        "python-sdk",
        "The MCP Python SDK",
        "a Python file (Python 3.10 or newer, with pip install 'mcp>=2')",
        PYTHON_SDK.format(url=json.dumps(url), variable=TOKEN_VARIABLE),
        f"It lists the tools this console offers you; client.call_tool(name, arguments) calls one. It reads the "
        f"token from {TOKEN_VARIABLE}.",
    )


def inspector_snippet(url: str) -> Snippet:
    return Snippet(
        "inspector",
        "The MCP Inspector",
        "a shell (Node.js 22 or newer)",
        shlex.join(["npx", "-y", "@modelcontextprotocol/inspector", "--cli", url, "--transport", "http", "--header"])
        + f' "Authorization: Bearer ${TOKEN_VARIABLE}" --method tools/list',
        f"It lists the tools this console offers you, with the token from {TOKEN_VARIABLE}. Without --cli and what "
        "follows it, the Inspector opens in the browser: choose Streamable HTTP, paste the endpoint, and add the "
        "Authorization header under Authentication.",
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
