"""What in a tool definition hides text from a reader or speaks to the model rather than about the tool.

Everything here reads definitions as the untrusted JSON an upstream server sent.
It returns plain data (the text of both sides, never markup), so whoever shows
it escapes it.

Hidden content is looked for in every string of a definition, object keys
included, since a model reads property names as well as descriptions:

- invisible characters: format characters (Unicode category Cf: zero-width
  characters, the word joiner, soft hyphens, the tag characters U+E0000 to
  U+E007F), variation selectors and control characters other than tab and
  newlines; bidirectional controls (RLO and the like) are named as such;
- HTML comments and markup (`<!-- -->`, `<IMPORTANT>`, `</p>`);
- a run of whitespace long enough to push what follows out of a reader's sight;
- instructions aimed at the model, from the short list INSTRUCTIONS below:
  each catches a phrasing seen in published tool-poisoning attacks;
- the exposed name of another server's tool, which a description has no
  business steering the model towards.
"""

import json
import re
import unicodedata
from dataclasses import dataclass

from approvals.protocol.json_paths import MAX_DEPTH, join

LONG_WHITESPACE = 20
LONG_NEWLINES = 5
MAX_WARNINGS = 50
_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
_COMMENT = re.compile(r"<!--")
_MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9_-]*(\s[^<>]*)?/?>")
_WHITESPACE_RUN = re.compile(
    rf"[ \t\u00a0\u2000-\u200a\u3000]{{{LONG_WHITESPACE},}}|(?:\r?\n[ \t]*){{{LONG_NEWLINES},}}"
)
INSTRUCTIONS = [
    (
        "tells the model to ignore its instructions",
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+|your\s+)?"
        r"(previous|prior|above|earlier|other|system)\s+(instructions|rules|directions|prompts?)",
    ),
    (
        "tells the model to keep something from the user",
        r"\b(do\s+not|don't|never)\s+(tell|inform|mention|show|reveal|notify|alert)\b[^.]{0,40}\buser",
    ),
    ("speaks of the system prompt", r"\bsystem\s+prompt\b"),
    ("gives the model a new role", r"\byou\s+are\s+now\b|\bact\s+as\s+(an?\s+)?(admin|administrator|root|developer)\b"),
    ("asks for secret files", r"~/\.ssh|\bid_rsa\b|\bid_ed25519\b|~/\.aws|\bmcp\.json\b"),
    (
        "steers the model away from other tools",
        r"\b(instead\s+of|rather\s+than|before\s+(using|calling))\s+(any|the|all)?\s*other\s+tools?\b",
    ),
]
_INSTRUCTIONS = [(label, re.compile(pattern, re.IGNORECASE)) for label, pattern in INSTRUCTIONS]


@dataclass(frozen=True)
class HiddenContent:
    path: str
    kind: str
    detail: str

    def __str__(self):
        return f"{self.path}: {self.kind}: {self.detail}"


def invisible_name(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'UNNAMED CHARACTER')}"


def is_bidi_control(char: str) -> bool:
    return ord(char) in _BIDI


def is_invisible(char: str) -> bool:
    """Whether a character shows nothing, or moves text, where a reader looks."""
    code = ord(char)
    if char in "\t\n\r":
        return False
    category = unicodedata.category(char)
    return category in ("Cf", "Cc") or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF


# What is_invisible finds in ASCII text, which is most text: its control characters (Cc) but tab and line ends.
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def reveal(text: str) -> str:
    """The text with each invisible character written out as ⟦U+XXXX⟧, so a reader sees where it is."""
    if text.isascii() and not _ASCII_INVISIBLE.search(text):
        return text
    return "".join(f"⟦U+{ord(c):04X}⟧" if is_invisible(c) else c for c in text)


def strings_of(value, path="", depth=0):
    """(path, text) for every string in a JSON document, object keys included, in document order."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, str):
        yield path or "(whole definition)", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield join(path, key) + " (key)", key
            yield from strings_of(item, join(path, key), depth + 1)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from strings_of(item, f"{path}[{n}]", depth + 1)


class Mentions:
    """The names of other tools to look for in a definition, made into one pattern once for many definitions."""

    def __init__(self, names=()):
        names = sorted({name for name in names if name}, key=len, reverse=True)
        self.pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])") if names else None


def hidden_content(definition, other_tools=()) -> list[HiddenContent]:
    """What in a definition could hide text from a reviewer or instruct a model; `other_tools` are names to look
    for, or Mentions made of them."""
    mentions = (other_tools if isinstance(other_tools, Mentions) else Mentions(other_tools)).pattern
    found = []
    for path, text in strings_of(definition):
        if path.endswith(".src") and text.startswith("data:"):
            continue  # an icon's bytes, base64: nothing a model reads as words
        found += _hidden_in(path, text, mentions)
        if len(found) >= MAX_WARNINGS:
            return found[:MAX_WARNINGS]
    return found


def _hidden_in(path, text, mentions) -> list[HiddenContent]:
    found = []
    invisible = _ASCII_INVISIBLE.findall(text) if text.isascii() else [c for c in text if is_invisible(c)]
    bidi = sorted({invisible_name(c) for c in invisible if is_bidi_control(c)})
    other = {}
    for c in invisible:
        if not is_bidi_control(c):
            other[invisible_name(c)] = other.get(invisible_name(c), 0) + 1
    if bidi:
        found.append(HiddenContent(path, "bidirectional control characters", ", ".join(bidi)))
    if other:
        found.append(
            HiddenContent(path, "invisible characters", ", ".join(f"{name} ×{n}" for name, n in sorted(other.items())))
        )
    if _COMMENT.search(text):
        found.append(HiddenContent(path, "HTML comment", "text between <!-- and --> is hidden wherever HTML is shown"))
    tags = sorted({m.group(0)[:40] for m in _MARKUP.finditer(text)})
    if tags:
        found.append(HiddenContent(path, "markup", ", ".join(tags[:5])))
    for run in _WHITESPACE_RUN.finditer(text):
        found.append(HiddenContent(path, "long run of whitespace", f"{len(run.group(0))} characters at {run.start()}"))
        break
    for label, pattern in _INSTRUCTIONS:
        match = pattern.search(text)
        if match:
            found.append(HiddenContent(path, "instruction to the model", f"{label}: “{reveal(match.group(0))}”"))
    if mentions is not None:
        named = sorted({m.group(1) for m in mentions.finditer(text)})
        if named:
            found.append(HiddenContent(path, "names another server's tool", ", ".join(named)))
    return found


def model_text(definition) -> str:
    """The definition as a model reads it, pretty-printed, every invisible character revealed."""
    return reveal(json.dumps(definition, indent=2, ensure_ascii=False))
