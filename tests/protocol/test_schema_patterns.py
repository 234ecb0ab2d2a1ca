"""Patterns in tool schemas: matched in linear time as ECMA-262 reads them, refused where RE2 cannot, bounded in
length and in the time a validation may take."""

import time

import pytest

from approvals.protocol import schemas
from approvals.protocol.schemas import validate
from tests.protocol.schema_cases import DRAFT_07, reason_for

SLUG = r"^[a-z0-9]+[a-z0-9-]*[a-z0-9]+$"
# Letters and a "!" at the end: a backtracking matcher tries every split of the letters before giving up.
PATHOLOGICAL = "a" * (schemas.MAX_MATCHED_CHARS - 1) + "!"


@pytest.mark.parametrize("pattern", [SLUG, r"^(a+)+$", r"^(a|aa)*$", r"(?:\w*)*x", r"^\d*\d*\d*$"])
def test_it_matches_a_pattern_that_would_backtrack_for_minutes_in_a_fraction_of_a_second(pattern):
    schema = {"type": "object", "properties": {"slug": {"type": "string", "pattern": pattern}}}
    started = time.monotonic()

    [message] = validate(schema, {"slug": PATHOLOGICAL})

    assert time.monotonic() - started < 3
    assert message.startswith("arguments.slug: 'aaaa")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {SLUG: {"type": "integer"}}},
        {"type": "object", "patternProperties": {SLUG: {}}, "additionalProperties": {"type": "integer"}},
        {"type": "object", "patternProperties": {SLUG: {}}, "unevaluatedProperties": {"type": "integer"}},
        {"$schema": DRAFT_07, "type": "object", "patternProperties": {SLUG: {}}, "additionalProperties": False},
    ],
)
def test_it_matches_pattern_properties_against_keys_in_a_fraction_of_a_second(schema):
    started = time.monotonic()

    messages = validate(schema, {PATHOLOGICAL: "x", "good-key": "y"})

    assert time.monotonic() - started < 3
    if "additionalProperties" in schema or "unevaluatedProperties" in schema:
        assert len(messages) == 1 and "aaaa" in messages[0] and "good-key" not in messages[0]
    else:
        assert messages == ["arguments.good-key: 'y' is not of type 'integer'"]


def test_it_matches_each_pattern_property_on_its_own_where_additional_properties_are_refused():
    # RE2 compiles each of these, but not the two joined into one pattern, as jsonschema would match them.
    keys = {r"^\p{L}{440}$": {}, r"^\p{N}{440}$": {}}
    schema = {"type": "object", "patternProperties": keys, "additionalProperties": False}

    assert validate(schema, {"a" * 440: 1, "1" * 440: 2}) == []
    assert validate(schema, {"a" * 440: 1, "q": 1, "r": 2}) == [
        "arguments: Additional properties are not allowed ('q', 'r' were unexpected)"
    ]


def test_it_stops_matching_pattern_properties_once_the_validation_is_out_of_time(monkeypatch):
    # A clock that moves a millisecond each time it is read: the stop depends on the reads, not on the machine's load.
    clock = SteppingClock()
    monkeypatch.setattr(schemas, "time", clock)
    monkeypatch.setattr(schemas, "MAX_SECONDS", 0.2)
    schema = {"type": "object", "patternProperties": {f"^k{i}x": {} for i in range(300)}}

    messages = validate(schema, {f"key{i}": i for i in range(3000)})

    assert messages == ["arguments: validation stopped after 0.2 seconds; the schema costs too much"]
    # Stopped near its 200th look at the clock, of the 900,000 matches the whole validation would make.
    assert clock.reads < 1000


class SteppingClock:
    def __init__(self):
        self.reads = 0

    def monotonic(self):
        self.reads += 1
        return self.reads / 1000


@pytest.mark.parametrize("pattern", [r"^(a+)\1$", r"^(?=.*\d)\w+$", r"(?<!x)y", r"(?<first>a)\k<first>"])
def test_it_refuses_a_backreference_or_lookaround_saying_why(pattern):
    for schema in ({"type": "string", "pattern": pattern}, {"type": "object", "patternProperties": {pattern: {}}}):
        reason = reason_for(schema)
        assert repr(pattern) in reason
        assert "RE2" in reason and "no backreferences, lookahead or lookbehind" in reason


def test_it_refuses_a_pattern_longer_than_the_limit():
    pattern = "a" * (schemas.MAX_PATTERN_CHARS + 1)
    assert reason_for({"type": "string", "pattern": pattern}) == (
        f"a pattern is {schemas.MAX_PATTERN_CHARS + 1} characters long, more than {schemas.MAX_PATTERN_CHARS}"
    )


@pytest.mark.parametrize(
    "pattern, matching, other",
    [
        # $ ends the text: it does not match before a final newline, as Python's re would.
        (r"^[a-z]+$", "abc", "abc\n"),
        # \d is ASCII: ARABIC-INDIC DIGIT THREE is no digit.
        (r"^\d+$", "123", "\u0663"),
        (r"^(?<year>\d{4})-(?<month>\d{2})$", "2026-07", "26-07"),
        (r"^[\u0041-\u005A]+$", "ABC", "abc"),
        # An escaped backslash before a u is no \u escape.
        (r"^\\u0041$", "\\u0041", "A"),
        # A surrogate pair is the one character it encodes.
        (r"^\uD83D\uDE00$", "\U0001f600", "\ud83d"),
        (r"ab", "xaby", "ba"),
    ],
)
def test_it_reads_patterns_as_ecma_262_and_searches_anywhere_in_the_string(pattern, matching, other):
    schema = {"type": "string", "pattern": pattern}
    assert validate(schema, matching) == []
    assert validate(schema, other) != []


def test_it_keeps_ordinary_patterns_including_fixed_repetitions_of_groups():
    schema = {"type": "string", "pattern": r"^(\d{1,3}\.){3}\d{1,3}$"}
    assert validate(schema, "10.0.0.1") == []
    assert validate(schema, "10.0.0") == ["arguments: '10.0.0' does not match '^(\\\\d{1,3}\\\\.){3}\\\\d{1,3}$'"]


def test_it_does_not_match_a_pattern_against_a_string_longer_than_the_limit():
    schema = {"type": "string", "pattern": r"^\d*\d*\d*$"}
    assert validate(schema, "1" * (schemas.MAX_MATCHED_CHARS + 1)) == [
        f"arguments: is {schemas.MAX_MATCHED_CHARS + 1} characters long; "
        f"the console matches at most {schemas.MAX_MATCHED_CHARS} against a pattern"
    ]
