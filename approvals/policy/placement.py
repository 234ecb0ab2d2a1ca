"""Where a new rule takes effect: above the first earlier rule that would take every call it matches, and which
earlier rules would still take some of them.

A rule added behind one that matches all it would never decides a call, so a new rule goes above the first such
rule; one that takes only some of its calls (a narrower tool, one server, conditions) is named with the calls it
takes, for the admin to judge. Only what can be shown from the rules alone counts.
"""

from dataclasses import dataclass

from approvals.policy.engine import Rule, condition_text
from approvals.policy.shadowing import GLOB_SPECIALS, covers, glob_covers


@dataclass(frozen=True)
class Placement:
    """The 1-based position for the new rule, and the rule it goes above because that one would take its calls."""

    position: int
    above: Rule | None = None


def placement(ordered: list[Rule], new: Rule) -> Placement:
    """Above the first of the enabled rules (in order) that matches every call `new` would; else last."""
    for index, earlier in enumerate(ordered):
        if covers(earlier, new):
            return Placement(index + 1, earlier)
    return Placement(len(ordered) + 1)


def globs_meet(one: str, other: str) -> bool:
    """Whether some name matches both patterns, where the rules alone show it: one covers the other, or one is
    `prefix*` and the other starts with `*` (the prefix before any name the other matches matches both)."""
    if glob_covers(one, other) or glob_covers(other, one):
        return True
    return any(prefix_only(a) and b.startswith("*") for a, b in ((one, other), (other, one)))


def prefix_only(glob: str) -> bool:
    return glob.endswith("*") and not GLOB_SPECIALS & set(glob[:-1])


def overlaps(earlier: Rule, later: Rule) -> bool:
    """Whether some call could be matched by both rules (conditions aside: some arguments may meet both)."""
    if earlier.applies_to != later.applies_to:
        return False
    if None not in (earlier.server_id, later.server_id) and earlier.server_id != later.server_id:
        return False
    if None not in (earlier.client_id, later.client_id) and earlier.client_id != later.client_id:
        return False
    if any(key in later.annotations and later.annotations[key] != v for key, v in earlier.annotations.items()):
        return False
    return globs_meet(earlier.tool_glob or "*", later.tool_glob or "*")


def shared_calls(earlier: Rule, later: Rule, names: dict) -> str:
    """The calls of `later` that `earlier` takes first, in words: 'calls to shop_issue_* on Shop if amount gt 100'.

    `names` gives ('server', id) and ('client', id) their names.
    """
    one, other = earlier.tool_glob or "*", later.tool_glob or "*"
    if glob_covers(one, other) or glob_covers(other, one):
        words = ["calls to " + (other if glob_covers(one, other) else one)]
    else:
        words = [f"calls to {other} matching {one}"]
    server = earlier.server_id or later.server_id
    if server is not None:
        words.append(f"on {names.get(('server', server), server)}")
    client = earlier.client_id or later.client_id
    if client is not None:
        words.append(f"from {names.get(('client', client), client)}")
    annotations = {**later.annotations, **earlier.annotations}
    if annotations:
        words.append("where " + ", ".join(f"{k}={str(v).lower()}" for k, v in annotations.items()))
    extra = [condition_text(c) for c in earlier.conditions if c not in later.conditions and isinstance(c, dict)]
    if extra:
        words.append("if " + " and ".join(extra))
    return " ".join(words)


def partly_covering(ordered: list[Rule], index: int) -> list[Rule]:
    """The enabled rules before `ordered[index]` that take some, not all, of the calls it matches."""
    rule = ordered[index]
    return [earlier for earlier in ordered[:index] if overlaps(earlier, rule) and not covers(earlier, rule)]
