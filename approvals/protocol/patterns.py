"""JSON Schema's regular expressions (``pattern``, ``patternProperties``), matched by RE2.

Schemas come from upstream servers and strings from models, so a pattern must
never cost more than time linear in the string it is matched against. Python's
``re`` backtracks: ``^[a-z0-9]+[a-z0-9-]*[a-z0-9]+$``, an ordinary slug rule,
holds the interpreter for seconds on a few thousand letters and a ``!``, and no
test of a pattern's shape catches every such case. RE2 matches in linear time
whatever the pattern, and releases the interpreter while it matches. What it
cannot express (backreferences, lookahead, lookbehind) is refused with RE2's
reason rather than matched some other way.

The patterns are ECMA-262's. For what schemas use, RE2 reads them alike (``$``
ends the text, ``\\d`` and ``\\w`` are ASCII, named groups are ``(?<name>...)``),
except for ``\\uXXXX``, which RE2 writes ``\\x{XXXX}``: those escapes are rewritten,
a surrogate pair to the one code point it encodes. A match is a search, anchored
only where the pattern anchors itself, as JSON Schema specifies.
"""

import re
from functools import lru_cache

import re2

CACHE_SIZE = 256

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refusal goes to the caller with its reason, not to stderr

# Each escape in turn, so that an escaped backslash before a "u" is never read as a \u escape.
_ESCAPE = re.compile(
    r"\\u(?P<high>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<low>[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u(?P<unit>[0-9a-fA-F]{4})"
    r"|\\.",
    re.DOTALL,
)


class PatternError(ValueError):
    """A pattern the console will not match; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _in_re2_syntax(match: re.Match) -> str:
    if match["high"]:
        code = 0x10000 + ((int(match["high"], 16) - 0xD800) << 10) + (int(match["low"], 16) - 0xDC00)
    elif match["unit"]:
        code = int(match["unit"], 16)
    else:
        return match[0]
    return f"\\x{{{code:04X}}}"


@lru_cache(maxsize=CACHE_SIZE)
def compiled(pattern: str):
    """``pattern`` compiled by RE2; PatternError when RE2 cannot express it."""
    try:
        return re2.compile(_ESCAPE.sub(_in_re2_syntax, pattern), _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(
            f"pattern {pattern!r} cannot be used: {detail}. The console matches patterns with RE2, "
            "in time linear in the text, which has no backreferences, lookahead or lookbehind"
        ) from None


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``."""
    return compiled(pattern).search(text) is not None
