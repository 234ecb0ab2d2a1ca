"""What the console knows of coding agents' own tools: the shape of their input, to label it and edit it.

A permission request names an agent's tool, which no upstream server defines. For the tools
shown specially (a shell command, a file edit, a write) these schemas give the value tree its
labels and the edit page its fields; any other input is shown and edited as it came. They allow
more than they name, since an agent may send properties a newer version added.
"""

from approvals.calls.models import Call


def text(title: str, description: str = "") -> dict:
    return {"type": "string", "title": title, **({"description": description} if description else {})}


AGENT_TOOL_SCHEMAS = {
    "Bash": {
        "type": "object",
        "properties": {
            "command": text("Command", "The shell command the agent runs."),
            "description": text("Description", "What the agent says the command does."),
            "timeout": {"type": "number", "title": "Timeout (ms)"},
            "run_in_background": {"type": "boolean", "title": "Run in the background"},
        },
        "required": ["command"],
    },
    "Write": {
        "type": "object",
        "properties": {"file_path": text("File path"), "content": text("Content")},
        "required": ["file_path", "content"],
    },
    "Edit": {
        "type": "object",
        "properties": {
            "file_path": text("File path"),
            "old_string": text("Old text"),
            "new_string": text("New text"),
            "replace_all": {"type": "boolean", "title": "Replace every occurrence"},
        },
        "required": ["file_path", "old_string", "new_string"],
    },
}


def input_schema(call: Call) -> dict:
    """The schema of what the call runs with: its tool's inputSchema, or for a permission request the agent tool's."""
    if call.kind == Call.Kind.PERMISSION:
        return AGENT_TOOL_SCHEMAS.get(call.tool_name, {})
    return (call.tool.definition if call.tool else {}).get("inputSchema") or {}
