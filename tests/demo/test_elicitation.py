"""issue_refund asks a person for the details: a server-to-client request before 2026, input_required in 2026."""

import mcp_types as types
import pytest

from tests.demo.conftest import both_eras, connect, envelope, tools_call

ELICITATION = {"elicitation": {"form": {}}}


class Person:
    """An elicitation callback that answers every form the same way and keeps what it was shown."""

    def __init__(self, action: str, content: dict | None = None):
        self.action, self.content = action, content
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append((context, params))
        return types.ElicitResult(action=self.action, content=self.content)


@both_eras
async def test_it_issues_the_refund_a_person_fills_in(mode, version):
    answer = {"amount": 12.5, "reason": "damaged", "notify_customer": False, "note": "Box crushed in transit"}
    person = Person("accept", answer)
    async with connect(mode, elicitation_callback=person) as client:
        result = await client.call_tool("issue_refund", {"order_id": "O1003"})

    assert not result.is_error
    text = result.content[0].text
    assert "Refund R0001 issued: 12.50 EUR on order O1003 (Item arrived damaged)." in text
    assert "The customer will not be emailed." in text
    assert "Note: Box crushed in transit" in text


@both_eras
@pytest.mark.parametrize("action, said", [("decline", "was declined"), ("cancel", "was dismissed")])
async def test_it_refunds_nothing_when_the_person_declines_or_dismisses_the_form(mode, version, action, said):
    async with connect(mode, elicitation_callback=Person(action)) as client:
        result = await client.call_tool("issue_refund", {"order_id": "O1003"})
        refunded = await client.call_tool("search_orders", {"status": "partially refunded"})

    assert not result.is_error
    assert result.content[0].text.startswith("Refund not issued")
    assert said in result.content[0].text and "Nothing was changed." in result.content[0].text
    assert refunded.content[0].text == "No orders match."


@both_eras
async def test_it_asks_for_a_bounded_amount_a_titled_reason_and_whether_to_email(mode, version):
    person = Person("decline")
    async with connect(mode, elicitation_callback=person) as client:
        await client.call_tool("issue_refund", {"order_id": "O1003"})

    ((_, params),) = person.asked
    assert "O1003" in params.message and params.mode == "form"
    schema = params.requested_schema
    fields = schema["properties"]
    assert fields["amount"]["minimum"] == 0.01 and fields["amount"]["maximum"] == 489.22
    assert {"const": "damaged", "title": "Item arrived damaged"} in fields["reason"]["oneOf"]
    assert fields["notify_customer"] == {**fields["notify_customer"], "type": "boolean", "default": True}
    assert fields["note"]["maxLength"] == 200
    assert schema["required"] == ["amount", "reason"]


@both_eras
async def test_it_asks_through_the_channel_of_the_era(mode, version):
    person = Person("decline")
    async with connect(mode, elicitation_callback=person) as client:
        await client.call_tool("issue_refund", {"order_id": "O1003"})

    ((context, _),) = person.asked
    # In 2026 the SDK hands over the input_required key; before, the id of the server's own request.
    assert (context.request_id == "confirm") == (version == "2026-07-28")


@both_eras
async def test_it_says_elicitation_is_unavailable_to_a_client_without_the_capability(mode, version):
    async with connect(mode) as client:
        result = await client.call_tool("issue_refund", {"order_id": "O1003"})

    assert result.is_error
    assert "elicitation is unavailable" in result.content[0].text
    assert "Nothing was changed." in result.content[0].text


@both_eras
async def test_it_refunds_nothing_when_the_form_comes_back_out_of_bounds(mode, version):
    person = Person("accept", {"amount": 100000, "reason": "late"})
    async with connect(mode, elicitation_callback=person) as client:
        result = await client.call_tool("issue_refund", {"order_id": "O1003"})

    assert result.is_error
    assert "the refund form came back invalid" in result.content[0].text
    assert "amount" in result.content[0].text


async def test_it_hands_out_a_signed_request_state_that_continues_only_its_own_call_once(raw):
    await raw.send(tools_call(1, **envelope(ELICITATION, name="issue_refund", arguments={"order_id": "O1003"})))
    first = (await raw.answer(1))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
    state = first["requestState"]
    declined = {"confirm": {"action": "decline"}}

    def retry(order_id: str, request_state: str) -> dict:
        return envelope(
            ELICITATION,
            name="issue_refund",
            arguments={"order_id": order_id},
            inputResponses=declined,
            requestState=request_state,
        )

    forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    assert (await raw.request(2, "tools/call", retry("O1003", forged)))["error"]["code"] == -32602
    assert (await raw.request(3, "tools/call", retry("O1004", state)))["error"]["code"] == -32602
    done = (await raw.request(4, "tools/call", retry("O1003", state)))["result"]
    assert done["resultType"] == "complete" and "was declined" in done["content"][0]["text"]
    replayed = await raw.request(5, "tools/call", retry("O1003", state))
    assert replayed["error"]["code"] == -32602 and "already used" in replayed["error"]["message"]


async def test_it_labels_reasons_with_enum_names_for_a_2025_06_18_client(raw):
    await raw.initialize("2025-06-18", {"elicitation": {}})
    await raw.send(tools_call(1, "issue_refund", {"order_id": "O1003"}))

    asked = await raw.receive()
    assert asked["method"] == "elicitation/create" and "mode" not in asked["params"]
    reason = asked["params"]["requestedSchema"]["properties"]["reason"]
    assert reason["enum"][0] == "damaged" and reason["enumNames"][0] == "Item arrived damaged"
    accepted = {"action": "accept", "content": {"amount": 5, "reason": "late"}}
    await raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": accepted})
    done = await raw.answer(1)
    assert "Refund R0001 issued: 5.00 EUR" in done["result"]["content"][0]["text"]
