"""Hostile JSON values for bench/fuzz_probes.py: what no well-formed message holds, written as given."""

import json
import random

TOOLS = [
    "demo_lookup_customer",
    "demo_search_orders",
    "demo_quote_order",
    "demo_delete_record",
    "demo_issue_refund",
    "demo_export_report",
    "demo_render_chart",
    "nope",
    "",
]


class Raw:
    """A JSON fragment written into the body as it is: what json.dumps cannot or will not write."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return f"Raw({self.text[:60]!r})"


def dump(value) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{dump(key)}:{dump(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dump(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def nested(rng: random.Random, depth: int):
    opening, closing = rng.choice([("[", "]"), ('{"a":', "}")])
    return Raw(opening * depth + "1" + closing * depth)


RAW_FRAGMENTS = [
    '"\\ud800"',
    '"a\\udc00b"',
    '"\\udbff\\udbff"',
    '"\\ude00\\ud83d"',
    '"\\u0000"',
    '"nul\\u0000inside"',
    "1e999",
    "-1e999",
    "1e-999",
    "-0",
    "1" + "0" * 5000,
    "-" + "9" * 4400,
    "123456789012345678901234567890",
    "0." + "0" * 2000 + "1",
    "9007199254740993",
    '"\\u202e\\u0301\\ufeff"',
]


def hostile(rng: random.Random):
    """A value of some wrong type, or an awkward one of the right type."""
    kind = rng.randrange(8)
    if kind == 0:
        return Raw(rng.choice(RAW_FRAGMENTS))
    if kind == 1:
        return nested(rng, rng.choice([10, 100, 900, 2000, 50_000]))
    if kind == 2:
        return rng.choice(
            [None, True, False, 0, -1, 1.5, 2**63, -(2**63) - 1, 10**40, [], {}, [None], {"": None}, "", " "]
        )
    if kind == 3:
        return rng.choice(["x" * rng.choice([1, 100, 5000, 100_000]), "😀" * 100, "\u0085\u2028", "../../etc"])
    if kind == 4:
        return {
            Raw(rng.choice(['"\\ud800"', '"\\u0000"', '""', '"a"'])): hostile(rng) for _ in range(rng.randint(1, 3))
        }
    if kind == 5:
        return [hostile(rng) for _ in range(rng.randint(0, 4))]
    if kind == 6:
        return rng.choice(TOOLS)
    return {"type": "text", "text": "x", "_meta": hostile(rng) if rng.random() < 0.5 else {}}
