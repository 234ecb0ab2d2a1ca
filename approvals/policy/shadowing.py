"""Rules that can never match: an earlier rule matches every call a later one would, so the later never decides.

Only what can be shown from the rules alone counts; where it cannot be, a rule is not shadowed.
"""

from fnmatch import fnmatchcase

from approvals.policy.engine import ALLOW, Rule


def covers(earlier: Rule, later: Rule) -> bool:
    """Whether every call `later` matches is matched by `earlier` first, so `later` never decides one.

    An allow rule's conditions fail closed the other way from a deny or ask rule's, so an
    earlier allow with conditions covers only a later allow.
    """
    if earlier.applies_to != later.applies_to:
        return False
    if earlier.server_id is not None and earlier.server_id != later.server_id:
        return False
    if earlier.client_id is not None and earlier.client_id != later.client_id:
        return False
    if not glob_covers(earlier.tool_glob or "*", later.tool_glob or "*"):
        return False
    if any(
        key not in later.annotations or later.annotations[key] != value for key, value in earlier.annotations.items()
    ):
        return False
    if earlier.conditions and earlier.action == ALLOW and later.action != ALLOW:
        return False
    return all(condition in later.conditions for condition in earlier.conditions)


GLOB_SPECIALS = frozenset("*?[")


def glob_covers(broad: str, narrow: str) -> bool:
    """Whether every name `narrow` matches is matched by `broad`: the same pattern, a plain name it matches,
    or a `prefix*` / `*suffix` whose literal part `narrow` shares before any wildcard of its own."""
    if broad == narrow or broad == "*":
        return True
    if not GLOB_SPECIALS & set(narrow):
        return fnmatchcase(narrow, broad)
    stem = broad[:-1]
    if broad.endswith("*") and not GLOB_SPECIALS & set(stem):
        return narrow.startswith(stem)
    tail = broad[1:]
    # A bracket in `narrow` could close inside the shared tail, which would then not be literal there.
    if broad.startswith("*") and not GLOB_SPECIALS & set(tail) and "[" not in narrow:
        return narrow.endswith(tail)
    return False


def shadowing(rules: list[Rule]) -> dict[int | None, Rule]:
    """For each rule (by id) that can never match, the first earlier rule that matches all it would."""
    found = {}
    for index, rule in enumerate(rules):
        cover = next((earlier for earlier in rules[:index] if covers(earlier, rule)), None)
        if cover is not None:
            found[rule.id] = cover
    return found
