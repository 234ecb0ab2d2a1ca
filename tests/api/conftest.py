"""People with API keys, and what they read and decide: a pending call and an input request asking for a form."""

import pytest

from approvals import roles
from approvals.api import keys
from approvals.calls import lifecycle
from approvals.calls.models import Call
from approvals.catalog.models import Tool
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import REFUND, make_server, make_tool
from tests.fixtures.people import make_user

FORM = {
    "mode": "form",
    "message": "Which account?",
    "requestedSchema": {
        "type": "object",
        "properties": {"account": {"type": "string", "maxLength": 20}, "notify": {"type": "boolean"}},
        "required": ["account"],
    },
}


def key_of(username, *role_names, **fields) -> str:
    """The secret of a new API key of a new user holding these roles."""
    return keys.create_key(make_user(username, *role_names, **fields), f"{username}'s bot")[1]


def bearer(secret: str) -> dict:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def held(refund):
    """A refund call held for a decision, and an input request of another call asking an operator for a form."""
    token = create_token("agent")[0]
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, refund, {"order_id": 7, "amount": 20}, 1, None)
    assert answer is None and call.status == Call.Status.PENDING
    asking, _ = lifecycle.receive_call(ctx, refund, {"order_id": 8, "amount": 30}, 2, None)
    Call.objects.filter(pk=asking.pk).update(status=Call.Status.FORWARDED)
    asked = requests.open_request(asking, requests.ELICIT, FORM, InputRequest.Route.OPERATOR)
    return call, asked


@pytest.fixture
def refund(transactional_db) -> Tool:
    """shop_issue_refund, with no rule: its calls wait for an operator."""
    return make_tool(make_server("Shop", slug="shop", tool_prefix="shop_"), **REFUND)


@pytest.fixture
def admin_key(transactional_db):
    return key_of("ada", roles.ADMIN)


@pytest.fixture
def operator_keys(transactional_db):
    return key_of("ann", roles.OPERATOR), key_of("bob", roles.OPERATOR)


@pytest.fixture
def auditor_key(transactional_db):
    return key_of("aud", roles.AUDITOR)
