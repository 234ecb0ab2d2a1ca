"""What a notification says of a call's arguments: the first few values, short, and never one that looks secret.

A notification shows on a lock screen, so a value whose name or schema says it is a credential is not shown at all.
"""

import json
import re

# How many arguments a notification names, and how much of each value.
SHOWN_ARGUMENTS = 3
VALUE_CHARS = 40
HIDDEN = "(hidden)"
SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[-_]?key|auth|credential|private[-_]?key|cookie|session|otp|pin$",
    re.IGNORECASE,
)


def secret(name: str, schema) -> bool:
    declared = schema.get("properties", {}).get(name) if isinstance(schema, dict) else None
    if isinstance(declared, dict) and (declared.get("writeOnly") is True or declared.get("format") == "password"):
        return True
    return SECRET_NAME.search(name) is not None


def value_text(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def arguments_text(arguments, schema=None) -> str:
    """`name: value, name: value` for the first SHOWN_ARGUMENTS arguments, secrets hidden."""
    if not isinstance(arguments, dict):
        return ""
    shown = list(arguments.items())[:SHOWN_ARGUMENTS]
    parts = [f"{name}: {HIDDEN if secret(name, schema) else value_text(value)}" for name, value in shown]
    more = len(arguments) - len(shown)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")
