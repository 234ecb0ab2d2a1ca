"""Pending calls on a tool with a flat schema and on one with a nested schema, and people holding each role."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from approvals import roles
from approvals.calls import lifecycle
from approvals.models import Call, Server, Tool
from approvals.protocol import revisions
from approvals.protocol.tools import tool_digest
from approvals.tokens.credentials import create_token

REFUND = {
    "name": "issue_refund",
    "title": "Issue a refund",
    "description": "Refund money on an order.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "order_id": {"type": "integer", "title": "Order", "description": "The order to refund."},
            "amount": {"type": "number", "title": "Amount", "maximum": 500},
            "reason": {"type": "string", "enum": ["damaged", "late"], "enumNames": ["Arrived damaged", "Arrived late"]},
        },
        "required": ["order_id", "amount"],
    },
    "annotations": {"destructiveHint": True, "readOnlyHint": False},
}
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


def make_tool(server, definition):
    return Tool.objects.create(
        server=server,
        upstream_name=definition["name"],
        exposed_name=server.tool_prefix + definition["name"],
        definition=definition,
        digest=tool_digest(definition),
    )


@pytest.fixture
def shop(db):
    return Server.objects.create(name="Shop", slug="shop", transport="stdio", command="true", tool_prefix="shop_")


@pytest.fixture
def refund_tool(shop):
    return make_tool(shop, REFUND)


@pytest.fixture
def ship_tool(shop):
    return make_tool(shop, SHIPMENT)


@pytest.fixture
def client_token(db):
    return create_token("agent-7")[0]


@pytest.fixture
def make_call(client_token):
    def pending(tool, arguments):
        ctx = lifecycle.ClientContext(client_token, revisions.MODERN, "2026-07-28")
        call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None)
        assert answer is None and call.status == Call.Status.PENDING
        return call

    return pending


@pytest.fixture
def refund_call(make_call, refund_tool):
    return make_call(refund_tool, {"order_id": 1012, "amount": 40, "reason": "late"})


@pytest.fixture
def person(db):
    """A user holding the given roles, and a test client signed in as them."""

    def make(username, *role_names):
        roles.ensure_roles()
        user = User.objects.create_user(username, password="a long enough test password")
        user.groups.set(Group.objects.filter(name__in=role_names))
        client = Client()
        client.force_login(user)
        return user, client

    return make
