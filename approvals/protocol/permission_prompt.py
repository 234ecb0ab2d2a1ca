"""The console's own approval_prompt tool, as Claude Code's --permission-prompt-tool calls it.

The agent sends the name of one of its own tools (Bash, Edit, ...), the input it would run
it with, and perhaps the id of that tool use; it reads back, as the text of the result, the
JSON of {"behavior": "allow", "updatedInput": {...}} or {"behavior": "deny", "message": "..."}.
"""

import json

from approvals.protocol.canonical import sha256_digest

NAME = "approval_prompt"
MAX_TOOL_NAME = 200
MAX_TOOL_USE_ID = 200

DEFINITION = {
    "name": NAME,
    "title": "Ask an operator for permission",
    "description": (
        "Asks the operators of the MCP Approval Console whether a coding agent may use one of its own tools "
        'with the given input. Answers, as JSON text, {"behavior": "allow", "updatedInput": {...}} '
        'to run the tool with that input, or {"behavior": "deny", "message": "..."}. '
        "Made for Claude Code's --permission-prompt-tool."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "tool_name": {"type": "string", "description": "The agent's tool that asks for permission, e.g. Bash."},
            "input": {"type": "object", "description": "The input the agent would run the tool with."},
            "tool_use_id": {"type": "string", "description": "The agent's id for this tool use."},
        },
        "required": ["tool_name", "input"],
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}
DIGEST = sha256_digest(DEFINITION)


class PromptError(ValueError):
    """Arguments that are not a permission request: the client is told what to fix."""


def read_arguments(arguments) -> tuple[str, dict, str]:
    """(tool_name, input, tool_use_id) of a well-formed call; PromptError naming what is wrong otherwise."""
    if not isinstance(arguments, dict):
        raise PromptError("approval_prompt needs an object of arguments")
    tool_name, tool_input, tool_use_id = (
        arguments.get("tool_name"),
        arguments.get("input"),
        arguments.get("tool_use_id"),
    )
    if not isinstance(tool_name, str) or not 0 < len(tool_name) <= MAX_TOOL_NAME:
        raise PromptError(f"'tool_name' must be a string of 1 to {MAX_TOOL_NAME} characters")
    if not isinstance(tool_input, dict):
        raise PromptError("'input' must be an object: the input the tool would run with")
    if tool_use_id is not None and (not isinstance(tool_use_id, str) or len(tool_use_id) > MAX_TOOL_USE_ID):
        raise PromptError(f"'tool_use_id' must be a string of at most {MAX_TOOL_USE_ID} characters")
    unknown = sorted(set(arguments) - {"tool_name", "input", "tool_use_id"})
    if unknown:
        raise PromptError(f"unknown argument {', '.join(unknown)}: approval_prompt takes tool_name, input, tool_use_id")
    return tool_name, tool_input, tool_use_id or ""


def allow(updated_input: dict) -> dict:
    return answer({"behavior": "allow", "updatedInput": updated_input})


def deny(message: str) -> dict:
    return answer({"behavior": "deny", "message": message})


def answer(decision: dict) -> dict:
    """A CallToolResult whose one text block is the decision's JSON, as the agent parses it."""
    return {"content": [{"type": "text", "text": json.dumps(decision, ensure_ascii=False)}]}
