import pytest
from django.contrib.auth.models import User

from approvals.models import Server, Tool
from approvals.protocol.tools import tool_digest
from approvals.tokens.credentials import create_token

REFUND = {
    "name": "issue_refund",
    "title": "Issue a refund",
    "inputSchema": {
        "type": "object",
        "properties": {"order_id": {"type": "integer"}, "amount": {"type": "number", "maximum": 500}},
        "required": ["order_id", "amount"],
    },
}


@pytest.fixture
def shop(db):
    return Server.objects.create(name="Shop", slug="shop", transport="stdio", command="true", tool_prefix="shop_")


@pytest.fixture
def refund_tool(shop):
    return Tool.objects.create(
        server=shop,
        upstream_name="issue_refund",
        exposed_name="shop_issue_refund",
        definition=REFUND,
        digest=tool_digest(REFUND),
    )


@pytest.fixture
def client_token(db):
    token, _ = create_token("agent")
    return token


@pytest.fixture
def operators(db):
    return [User.objects.create_user(name) for name in ("ann", "bob")]
