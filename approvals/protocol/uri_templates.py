"""RFC 6570 URI templates, as far as routing needs them: is a template well formed, does a URI match it,
may two match one URI, and what do some values expand it to.

Matching is by shape, not by expansion: a variable stands for any run of the
characters its operator could have produced, so a URI matches when some values
would expand the template to it.
"""

import re
from functools import lru_cache

import uritemplate

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")
# RFC 6570's varspec: a name of letters, digits, '_' and %-escapes, dotted, with an optional prefix or explode modifier.
_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = re.compile(rf"{_VARCHAR}+(?:\.{_VARCHAR}+)*(?:\*|:[1-9][0-9]{{0,3}})?")
# Per operator: the character its expansion starts with when a value is present, and the characters it cannot hold.
_SHAPES = {
    "": ("", "/?#"),
    "+": ("", "?#"),
    "#": ("#", ""),
    ".": (".", "/?#"),
    "/": ("/", "?#"),
    ";": (";", "/?#"),
    "?": ("?", "#"),
    "&": ("&", "#"),
}


def template_errors(template: str) -> list[str]:
    """Why `template` is not an RFC 6570 URI template (empty when it is)."""
    literal = _EXPRESSION.sub("", template)
    if "{" in literal or "}" in literal:
        return [f"its uriTemplate {template[:200]!r} has an unmatched brace"]
    for _operator, variables in _EXPRESSION.findall(template):
        if not all(_VARSPEC.fullmatch(spec) for spec in variables.split(",")):
            return [f"its uriTemplate {template[:200]!r} has a malformed expression {{{variables[:80]}}}"]
    return []


@lru_cache(maxsize=1024)
def _parts(template: str) -> tuple:
    parts, end = [], 0
    for match in _EXPRESSION.finditer(template):
        parts.append(template[end : match.start()])
        parts.append(_SHAPES[match[1]])
        end = match.end()
    parts.append(template[end:])
    return tuple(part for part in parts if part != "")


def expanded(template: str, values: dict[str, str]) -> str:
    """The URI these values expand the template to (RFC 6570, by uritemplate); a variable without one is left out."""
    return uritemplate.expand(template, values)


def matches(template: str, uri: str) -> bool:
    """Whether some values of its variables expand `template` to `uri`; the template must have no errors.

    Walks the URI once per part of the template, keeping the set of positions
    reached so far, so a hostile template costs no backtracking.
    """
    reached = {0}
    for part in _parts(template):
        if isinstance(part, str):
            reached = {p + len(part) for p in reached if uri.startswith(part, p)}
        else:
            reached = _expanded(part, reached, uri)
        if not reached:
            return False
    return len(uri) in reached


def _expanded(shape: tuple[str, str], reached: set[int], uri: str) -> set[int]:
    lead, excluded = shape
    after = set(reached)  # a variable may expand to nothing
    covered = -1  # every position up to here is in `after` already, with the run from it
    for start in sorted(reached):
        if lead:
            if not uri.startswith(lead, start):
                continue
            start += 1
            after.add(start)
        position = max(start, covered)
        while position < len(uri) and uri[position] not in excluded:
            position += 1
            after.add(position)
        covered = max(covered, position)
    return after


def overlaps(first: str, second: str, budget: int = 50_000) -> bool:
    """Whether some URI matches both templates (by shape, as `matches`); neither may have errors.

    Walks the two templates side by side, a pair of positions at a time, so nothing
    backtracks and the cost is bounded by the product of their lengths; past `budget`
    pairs it answers True, since a overlap it could not rule out must count as one.
    A variable's run meets any other run: some character lies outside both exclusions.
    """
    a, b = _steps(first), _steps(second)
    done = ((len(a), False), (len(b), False))
    todo = [((0, False), (0, False))]
    seen = set(todo)
    while todo:
        here = todo.pop()
        if here == done:
            return True
        if len(seen) > budget:
            return True
        x, y = here
        pairs = [(after, y) for after in _skips(a, x)] + [(x, after) for after in _skips(b, y)]
        for reads_a, next_a in _moves(a, x):
            pairs += [(next_a, next_b) for reads_b, next_b in _moves(b, y) if _meet(reads_a, reads_b)]
        for pair in pairs:
            if pair not in seen:
                seen.add(pair)
                todo.append(pair)
    return False


@lru_cache(maxsize=256)
def _steps(template: str) -> tuple:
    """The template one character at a time: a literal character, or a variable's shape."""
    return tuple(step for part in _parts(template) for step in (part if isinstance(part, str) else (part,)))


def _skips(steps: tuple, state: tuple[int, bool]) -> list[tuple[int, bool]]:
    """The states reached without reading: a state is a step's index, and whether inside that variable's run."""
    index, inside = state
    if index == len(steps) or isinstance(steps[index], str):
        return []
    # The variable expands to nothing, or its run ends here; one without a lead character starts its run at once.
    return [(index + 1, False)] + ([(index, True)] if not inside and not steps[index][0] else [])


def _moves(steps: tuple, state: tuple[int, bool]) -> list[tuple[tuple[str, str], tuple[int, bool]]]:
    """What the state reads, ("is", a character) or ("not", the characters excluded), and the state after."""
    index, inside = state
    if index == len(steps):
        return []
    step = steps[index]
    if isinstance(step, str):
        return [(("is", step), (index + 1, False))]
    lead, excluded = step
    if inside:
        return [(("not", excluded), (index, True))]
    return [(("is", lead), (index, True))] if lead else []


def _meet(first: tuple[str, str], second: tuple[str, str]) -> bool:
    if first[0] == "is" and second[0] == "is":
        return first[1] == second[1]
    if first[0] == "is":
        return first[1] not in second[1]
    if second[0] == "is":
        return second[1] not in first[1]
    return True
