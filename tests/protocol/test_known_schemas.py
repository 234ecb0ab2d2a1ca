"""A schema given with a key its caller vouches for (a tool's digest): encoded and hashed once, not at every call."""

import pytest

from approvals.protocol import schemas
from approvals.protocol.schemas import validate


def test_it_encodes_a_schema_given_with_a_known_key_only_the_first_time(monkeypatch):
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "title": "known once"}
    encoded, encode = [], schemas._encoded
    monkeypatch.setattr(
        schemas, "_encoded", lambda value, limit, *more: encoded.append(value is schema) or encode(value, limit, *more)
    )

    assert validate(schema, {"a": "x"}, known=("digest-1", "inputSchema")) == []
    assert validate(schema, {"a": 1}, known=("digest-1", "inputSchema")) == ["arguments.a: 1 is not of type 'string'"]
    other = validate({"type": "integer"}, "x", known=("digest-2", "inputSchema"))

    assert other == ["arguments: 'x' is not of type 'integer'"]
    # The schema once, then only the instances; another key's schema is its own.
    assert encoded == [True, False, False, False, False]


def test_it_refuses_an_unusable_schema_given_with_a_key_each_time():
    for _ in range(2):
        with pytest.raises(schemas.SchemaError):
            validate({"type": "nonsense"}, 1, known=("digest-3", "inputSchema"))
