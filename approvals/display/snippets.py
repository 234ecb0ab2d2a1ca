"""Ready-to-paste configuration that points an MCP client at the console's endpoint.

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


def snippets(url: str, token: str | None = None) -> list[Snippet]:
    """Where a client can read the token from its environment or ask for it itself, the snippet names the variable
    or the prompt rather than the token, so the token never sits in a file or a shell's history."""
    secret = token or TOKEN_PLACEHOLDER
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
        Snippet(
            "claude-code-permissions",
            "Claude Code asking operators for permission",
            "a shell, to run Claude Code headless with its permission prompts in the queue",
            permission_prompt_command(url, from_env),
            f"Each tool use the agent would ask you about waits here as a permission request. The token must "
            f"allow the tool {permission_prompt.NAME}; rules for permission requests allow, deny or ask by the "
            "agent's tool (Bash, Edit, Read...) and its input.",
        ),
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
