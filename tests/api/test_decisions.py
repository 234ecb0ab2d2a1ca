"""Deciding calls and answering input requests over the API: through the console's own decision functions,
so the binding, quorum and separation of duties hold, and the decision is its user's in the audit log."""

import asyncio

import httpx

from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.inputs.models import InputRequest
from tests.api.conftest import bearer


def decide(client, call_id, secret, **decision):
    return client.post(
        f"/api/v1/calls/{call_id}/decision", decision, content_type="application/json", headers=bearer(secret)
    )


def binding_of(client, call_id, secret) -> str:
    return client.get(f"/api/v1/calls/{call_id}", headers=bearer(secret)).json()["binding"]


def test_it_shows_a_call_with_its_arguments_tool_binding_and_timeline(client, held, operator_keys):
    call, _ = held

    shown = client.get(f"/api/v1/calls/{call.pk}", headers=bearer(operator_keys[0])).json()

    assert shown["arguments"] == {"order_id": 7, "amount": 20} and shown["status"] == "pending"
    assert shown["tool_definition"]["name"] == "issue_refund" and len(shown["binding"]) == 64
    assert [step["name"] for step in shown["timeline"]] == ["Received", "Policy"]


def test_it_lists_pending_calls_and_input_requests_by_client_server_tool_and_age(client, held, operator_keys):
    call, asked = held
    key = bearer(operator_keys[0])

    everything = client.get("/api/v1/queue", headers=key).json()
    by_tool = client.get("/api/v1/queue", {"tool": "shop_issue_refund", "server": "shop"}, headers=key).json()
    other_client = client.get("/api/v1/queue", {"client": "someone else"}, headers=key).json()
    too_young = client.get("/api/v1/queue", {"min_age": 3600}, headers=key).json()

    assert [c["id"] for c in everything["calls"]] == [call.pk] and [i["id"] for i in everything["inputs"]] == [asked.pk]
    assert [c["id"] for c in by_tool["calls"]] == [call.pk]
    assert other_client == {"calls": [], "inputs": []} and too_young == {"calls": [], "inputs": []}


def test_it_approves_as_the_keys_user_in_the_audit_log(client, held, operator_keys):
    call, _ = held
    ann = operator_keys[0]

    approved = decide(client, call.pk, ann, action="approve", binding=binding_of(client, call.pk, ann), reason="ok")

    assert approved.status_code == 200 and approved.json()["call"]["status"] == "approved"
    event = AuditEvent.objects.get(call_id=call.pk, action="call.approved")
    assert (event.actor_type, event.actor_name, event.data["reason"], event.data["via"]) == ("user", "ann", "ok", "api")


def test_it_denies_with_a_reason(client, held, operator_keys):
    call, _ = held
    ann = operator_keys[0]

    denied = decide(client, call.pk, ann, action="deny", binding=binding_of(client, call.pk, ann), reason="no")

    assert denied.status_code == 200
    assert Call.objects.filter(pk=call.pk, status=Call.Status.DENIED, reason="no", decided_by_name="ann").exists()


def test_it_approves_edited_arguments_checked_against_the_tools_schema(client, held, operator_keys):
    call, _ = held
    ann = operator_keys[0]
    binding = binding_of(client, call.pk, ann)

    invalid = decide(client, call.pk, ann, action="approve", binding=binding, arguments={"order_id": 7, "amount": 9999})
    edited = decide(client, call.pk, ann, action="approve", binding=binding, arguments={"order_id": 7, "amount": 5})

    assert invalid.status_code == 422 and invalid.json()["errors"]
    assert edited.status_code == 200
    assert Call.objects.get(pk=call.pk).edited_arguments == {"order_id": 7, "amount": 5}
    assert AuditEvent.objects.filter(call_id=call.pk, action="call.edited", actor_name="ann").exists()


def test_it_refuses_a_decision_on_a_binding_that_no_longer_holds_with_409(client, held, operator_keys):
    call, _ = held

    stale = decide(client, call.pk, operator_keys[0], action="approve", binding="0" * 64)

    assert stale.status_code == 409
    assert stale.json()["status"] == "pending" and stale.json()["binding"] == binding_of(
        client, call.pk, operator_keys[0]
    )


def test_it_counts_api_approvals_toward_a_quorum_of_distinct_operators(client, held, operator_keys):
    call, _ = held
    Call.objects.filter(pk=call.pk).update(approvals_needed=2)
    ann, bob = operator_keys
    binding = binding_of(client, call.pk, ann)

    first = decide(client, call.pk, ann, action="approve", binding=binding)
    again = decide(client, call.pk, ann, action="approve", binding=binding)
    second = decide(client, call.pk, bob, action="approve", binding=binding)

    assert first.status_code == 200 and first.json()["call"]["status"] == "pending"
    assert again.status_code == 403 and "approved already" in again.json()["detail"]
    assert second.status_code == 200 and second.json()["call"]["status"] == "approved"


def test_it_keeps_a_tokens_owner_from_approving_its_call_under_separation_of_duties(client, held, operator_keys):
    call, _ = held
    ann = operator_keys[0]
    from approvals.api.models import ApiKey

    call.token.owner = ApiKey.objects.get(user__username="ann").user
    call.token.save()
    Call.objects.filter(pk=call.pk).update(separation_of_duties=True)

    refused = decide(client, call.pk, ann, action="approve", binding=binding_of(client, call.pk, ann))

    assert refused.status_code == 403 and "separation of duties" in refused.json()["detail"]


async def test_it_gives_one_of_two_clients_deciding_at_once_200_and_the_other_409(held, operator_keys, live_console):
    call, _ = held

    async def decide_as(secret, action):
        async with httpx.AsyncClient(base_url=live_console, headers=bearer(secret), timeout=10) as http:
            binding = (await http.get(f"/api/v1/calls/{call.pk}")).json()["binding"]
            return await http.post(f"/api/v1/calls/{call.pk}/decision", json={"action": action, "binding": binding})

    answers = await asyncio.gather(decide_as(operator_keys[0], "approve"), decide_as(operator_keys[1], "deny"))

    assert sorted(a.status_code for a in answers) == [200, 409]
    winner = next(a for a in answers if a.status_code == 200).json()["call"]
    late = next(a for a in answers if a.status_code == 409).json()
    assert late["decided_by"] == winner["decided_by"] in ("ann", "bob") and late["decided_at"]
    assert late["status"] == winner["status"] and late["detail"].startswith("Already")


def test_it_answers_an_input_request_checked_against_its_schema(client, held, operator_keys):
    _, asked = held
    ann, bob = operator_keys

    def answer(secret, **body):
        url = f"/api/v1/inputs/{asked.pk}/answer"
        return client.post(url, body, content_type="application/json", headers=bearer(secret))

    shown = client.get(f"/api/v1/inputs/{asked.pk}", headers=bearer(ann)).json()
    unfit = answer(ann, action="accept", content={"account": "x" * 30})
    fit = answer(ann, action="accept", content={"account": "acme", "notify": True})
    late = answer(bob, action="decline")

    assert shown["requested_schema"]["required"] == ["account"]
    assert unfit.status_code == 422 and unfit.json()["errors"]
    assert fit.status_code == 200 and fit.json()["input"]["status"] == "answered"
    assert late.status_code == 409 and late.json()["decided_by"] == "ann"
    assert InputRequest.objects.get(pk=asked.pk).answer == {
        "action": "accept",
        "content": {"account": "acme", "notify": True},
    }
    assert AuditEvent.objects.filter(action="input.answered", actor_name="ann").exists()


def test_it_names_the_fields_at_fault_and_refuses_a_body_that_is_not_json(client, held, operator_keys):
    call, _ = held
    url, key = f"/api/v1/calls/{call.pk}/decision", bearer(operator_keys[0])

    missing = client.post(url, {"action": "approve"}, content_type="application/json", headers=key)
    garbled = client.post(url, "{", content_type="application/json", headers=key)

    assert missing.status_code == 422 and missing.json()["errors"] == ["binding: Field required"]
    assert garbled.status_code == 400 and garbled.json()["detail"]
    assert Call.objects.get(pk=call.pk).status == Call.Status.PENDING
