"""RFC 6570 URI templates, as far as routing needs them: is a template well formed, and does a URI match it.

Matching is by shape, not by expansion: a variable stands for any run of the
characters its operator could have produced, so a URI matches when some values
would expand the template to it.
"""

import re
from functools import lru_cache

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
