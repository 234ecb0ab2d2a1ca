"""A coding agent's permission request shown for what it is: a command, a file edit, a write, or its input.

All of it comes from the agent and is untrusted: templates escape it, and every text is cut to a
bound (the whole input stays in the call's row and on its page as a tree), so that a huge
input neither floods the page nor makes the diff slow.
"""

import difflib
from dataclasses import dataclass, field

from approvals.calls.models import Call

MAX_CHARS = 20_000
MAX_DIFF_LINES = 400
COMMAND_TOOLS = {"Bash"}
EDIT_TOOLS = {"Edit", "MultiEdit"}
WRITE_TOOLS = {"Write"}


@dataclass(frozen=True)
class Clipped:
    text: str
    left_out: int = 0  # characters not shown


def clipped(value: str, limit: int = MAX_CHARS) -> Clipped:
    return Clipped(value[:limit], max(0, len(value) - limit))


@dataclass(frozen=True)
class DiffLine:
    sign: str  # "+", "-", " ", or "@" for a hunk header
    text: str


@dataclass
class Shown:
    """What the queue and the call's page show; `kind` is command, edit, write, or tree (shown as a value tree)."""

    kind: str
    value: dict
    path: Clipped | None = None
    command: Clipped | None = None
    description: Clipped | None = None
    content: Clipped | None = None
    edits: list[list[DiffLine]] = field(default_factory=list)
    diff_truncated: bool = False


def permission_view(call: Call, value=None) -> Shown:
    """How to show `value`, an input of the request; by default the one it would run with now (edited or not).

    Templates pass their `value`, which is "" where none was given.
    """
    tool_input = value if isinstance(value, dict) else call.final_arguments
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    name = call.tool_name
    if name in COMMAND_TOOLS and isinstance(tool_input.get("command"), str):
        description = tool_input.get("description")
        return Shown(
            "command",
            tool_input,
            command=clipped(tool_input["command"]),
            description=clipped(description, 2000) if isinstance(description, str) else None,
        )
    path = tool_input.get("file_path")
    if not isinstance(path, str):
        return Shown("tree", tool_input)
    if name in WRITE_TOOLS and isinstance(tool_input.get("content"), str):
        return Shown("write", tool_input, path=clipped(path, 2000), content=clipped(tool_input["content"]))
    changes = tool_input.get("edits") if name == "MultiEdit" else [tool_input]
    if name in EDIT_TOOLS and isinstance(changes, list) and changes and all(map(is_edit, changes)):
        shown = Shown("edit", tool_input, path=clipped(path, 2000))
        budget = MAX_DIFF_LINES
        for change in changes:
            lines = diff_lines(change["old_string"], change["new_string"], budget)
            budget -= len(lines)
            shown.edits.append(lines)
            if budget <= 0:
                shown.diff_truncated = True
                break
        return shown
    return Shown("tree", tool_input)


def is_edit(change) -> bool:
    return isinstance(change, dict) and all(isinstance(change.get(k), str) for k in ("old_string", "new_string"))


def diff_lines(old: str, new: str, budget: int) -> list[DiffLine]:
    """A unified diff of the old and new text, at most `budget` lines, from texts cut to MAX_CHARS."""
    diff = difflib.unified_diff(
        old[:MAX_CHARS].splitlines(), new[:MAX_CHARS].splitlines(), lineterm="", n=2, fromfile="old", tofile="new"
    )
    lines = []
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        if len(lines) >= budget:
            break
        sign = "@" if line.startswith("@@") else line[:1]
        lines.append(DiffLine(sign, line if sign == "@" else line[1:]))
    return lines
