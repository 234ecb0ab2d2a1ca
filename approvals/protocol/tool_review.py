"""Reviewing a tool definition: what changed since the reviewed one, field by field.

Everything here reads definitions as the untrusted JSON an upstream server sent.
It returns plain data (the text of both sides, never markup), so whoever shows
it escapes it. What in a definition hides text from a reader is hidden_text's.
"""

import difflib
import json
import re
from dataclasses import dataclass

from approvals.protocol.hidden_text import reveal
from approvals.protocol.json_paths import MAX_DEPTH, join

MAX_PATHS = 100
# The fields shown first, in this order; any other field follows by name.
FIELD_ORDER = ["title", "description", "annotations", "inputSchema", "outputSchema", "icons"]
TEXT_FIELDS = {"title", "description"}

_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class PathChange:
    path: str
    kind: str  # "added", "removed" or "changed"
    old: object = None
    new: object = None


@dataclass(frozen=True)
class FieldChange:
    """One top-level field that differs: text fields as words, the others as paths."""

    field: str
    words: list | None  # [(op, text)] with op "equal", "delete" or "insert"; None for a non-text field
    paths: list  # [PathChange]; empty for a text field


class Missing:
    """Stands for a key or item one side lacks: unequal to every JSON value."""


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """The two texts as runs of equal, deleted and inserted text, split at word boundaries."""
    before, after = _WORDS.findall(old), _WORDS.findall(new)
    runs = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op == "equal":
            _append(runs, "equal", "".join(before[i1:i2]))
            continue
        if i2 > i1:
            _append(runs, "delete", "".join(before[i1:i2]))
        if j2 > j1:
            _append(runs, "insert", "".join(after[j1:j2]))
    return runs


def _append(runs, op, text):
    if runs and runs[-1][0] == op:
        runs[-1] = (op, runs[-1][1] + text)
    else:
        runs.append((op, text))


def path_changes(old, new, limit=MAX_PATHS, prefix="") -> list[PathChange]:
    """Where two JSON documents differ, as paths like inputSchema.properties.id.type with both values."""
    changes = []
    _walk(old, new, prefix, 0, changes, limit)
    return changes


def _walk(old, new, path, depth, changes, limit):
    if len(changes) >= limit:
        return
    # Compared by type first: in Python 1 == True and 1 == 1.0, in JSON they differ.
    if type(old) is not type(new):
        _differ(old, new, path, changes)
    elif isinstance(old, dict) and depth < MAX_DEPTH:
        for key in sorted(old.keys() | new.keys()):
            _walk(old.get(key, Missing), new.get(key, Missing), join(path, key), depth + 1, changes, limit)
    elif isinstance(old, list) and depth < MAX_DEPTH:
        for n in range(max(len(old), len(new))):
            before = old[n] if n < len(old) else Missing
            after = new[n] if n < len(new) else Missing
            _walk(before, after, f"{path}[{n}]", depth + 1, changes, limit)
    elif canonical(old) != canonical(new):
        _differ(old, new, path, changes)


def _differ(old, new, path, changes):
    path = path or "(whole definition)"
    if old is Missing:
        changes.append(PathChange(path, "added", new=new))
    elif new is Missing:
        changes.append(PathChange(path, "removed", old=old))
    else:
        changes.append(PathChange(path, "changed", old, new))


def canonical(value):
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def definition_changes(old, new) -> list[FieldChange]:
    """Each top-level field of two definitions that differs, in FIELD_ORDER and then by name."""
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    fields = sorted(old.keys() | new.keys(), key=lambda f: (FIELD_ORDER.index(f) if f in FIELD_ORDER else 99, f))
    changes = []
    for field in fields:
        before, after = old.get(field, Missing), new.get(field, Missing)
        if type(before) is type(after) and canonical(before) == canonical(after):
            continue
        if field in TEXT_FIELDS and all(isinstance(side, str) or side is Missing for side in (before, after)):
            words = word_diff("" if before is Missing else before, "" if after is Missing else after)
            changes.append(FieldChange(field, words, []))
        else:
            changes.append(FieldChange(field, None, path_changes(before, after, prefix=join("", field))))
    return changes


def brief_json(value, limit=300) -> str:
    """A JSON value on one line, cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain_diff(changes: list[FieldChange]) -> list[str]:
    """The changes as lines of plain text: words as [-deleted-]{+inserted+}, paths with both values."""
    lines = []
    for change in changes:
        if change.words is not None:
            marked = {"equal": "{}", "delete": "[-{}-]", "insert": "{{+{}+}}"}
            text = "".join(marked[op].format(reveal(words)) for op, words in change.words)
            lines.append(f"{change.field}:")
            lines += [f"    {line}" for line in text.splitlines() or [""]]
            continue
        for path in change.paths:
            if path.kind == "added":
                lines.append(f"{path.path}: added {reveal(brief_json(path.new))}")
            elif path.kind == "removed":
                lines.append(f"{path.path}: removed {reveal(brief_json(path.old))}")
            else:
                lines.append(f"{path.path}: {reveal(brief_json(path.old))} -> {reveal(brief_json(path.new))}")
    return lines
