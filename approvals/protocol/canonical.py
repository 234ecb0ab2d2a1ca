"""One byte encoding per JSON value, so that equal values hash alike.

The encoding, which tool digests and the audit log's hash chain both rest on:

- The value must be JSON as Python holds it: dict with str keys, list or tuple
  (both become arrays), str, int, float, bool and None. Anything else, a
  non-string key, NaN or an infinity is a ValueError, never a silent coercion
  (``json.dumps`` would turn the key ``1`` into ``"1"``, making two values one).
- Object keys are sorted by Unicode code point (Python's ``str`` order; this
  differs from RFC 8785, which sorts by UTF-16 code unit).
- No whitespace: separators are ``,`` and ``:``.
- Strings are written with ``json.dumps`` escaping and ``ensure_ascii=False``:
  non-ASCII characters appear as themselves, then the whole text is UTF-8.
  A string holding a lone surrogate cannot be UTF-8 and is a ValueError.
- ``true``/``false``/``null``; integers in decimal; floats as Python's
  ``repr`` (the shortest text that reads back to the same float), so ``1`` and
  ``1.0`` encode differently, as do ``0.0`` and ``-0.0``.
"""

import hashlib
import json
import math

_SCALARS = (str, int, bool, type(None))


def _reject_non_json(value) -> None:
    # Iterative, so that a deeply nested value fails here with a reason rather than a RecursionError.
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    raise ValueError(f"object keys must be strings, not {type(key).__name__}")
                stack.append(child)
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise ValueError(f"{node!r} has no JSON encoding")
        elif not isinstance(node, _SCALARS):
            raise ValueError(f"{type(node).__name__} is not a JSON type")


def canonical_json(value) -> bytes:
    """The canonical UTF-8 bytes of a JSON value (see the module docstring)."""
    _reject_non_json(value)
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise ValueError("the value is nested too deeply to encode") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate, which UTF-8 cannot encode") from None


def sha256_digest(value) -> str:
    """Lowercase hex SHA-256 of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
