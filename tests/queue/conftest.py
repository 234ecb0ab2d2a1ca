"""Pending calls on a tool with a flat schema and on one with a nested schema."""

import pytest

from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_tool

SHIPMENT = {
    "name": "ship",
    "title": "Ship parcels",
    "inputSchema": {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string", "title": "City"}},
                "required": ["city"],
            },
            "parcels": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        },
        "required": ["address"],
    },
}


@pytest.fixture
def ship_tool(shop):
    return make_tool(shop, **SHIPMENT)


@pytest.fixture
def client_token(db):
    """The queue tests look for who asked in the page: a name no other word there contains."""
    return create_token("agent-7")[0]


@pytest.fixture
def make_call(client_token):
    def pending(tool, arguments):
        ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
        call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None)
        assert answer is None and call.status == Call.Status.PENDING
        return call

    return pending


@pytest.fixture
def refund_call(make_call, refund_tool):
    return make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})
