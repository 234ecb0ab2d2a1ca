"""make run's demo: the demo server's issue_refund, once approved, asks an operator for the amount and reason."""

import asyncio

from asgiref.sync import sync_to_async

from approvals.calls import deciding
from approvals.inputs import requests
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.gateway import sdk_client
from tests.inputs.conftest import wait_for_input


async def test_it_issues_the_refund_an_operator_fills_in_after_approving_the_call(
    mcp_url, secret, demo_server, operator
):
    async with sdk_client(mcp_url, secret) as client:
        answer = asyncio.create_task(client.call_tool("demo_issue_refund", {"order_id": "O1003"}))
        call = await wait_for_pending_call()
        await sync_to_async(deciding.decide)(call.pk, operator, True)
        asked = await wait_for_input()
        schema = asked.params["requestedSchema"]
        refused = await sync_to_async(requests.answer)(
            asked.pk, operator, "accept", {"amount": 10_000, "reason": "late"}
        )
        outcome = await sync_to_async(requests.answer)(
            asked.pk, operator, "accept", {"amount": 12.5, "reason": "damaged", "notify_customer": False}
        )
        result = await asyncio.wait_for(answer, 15)

    assert "O1003" in asked.message and asked.server_id == demo_server.pk
    assert schema["properties"]["amount"]["maximum"] == 489.22 and schema["required"] == ["amount", "reason"]
    assert refused.errors == ["'amount': must be at most 489.22"]
    assert outcome.won
    assert "Refund R0001 issued: 12.50 EUR on order O1003 (Item arrived damaged)." in result.content[0].text
    assert "The customer will not be emailed." in result.content[0].text
