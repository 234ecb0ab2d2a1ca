"""Each way a call can go leaves exactly its audit events, in order, with who did what and with which arguments."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from approvals.audit import verify
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, holding, runner, upstream_call
from approvals.policy.models import PolicyRule
from approvals.protocol import revisions
from approvals.protocol.canonical import canonical_json, sha256_digest
from approvals.tokens.context import ClientContext
from approvals.upstream import UpstreamError
from tests.fixtures.calls import wait_for_pending_call
from tests.fixtures.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)

ARGUMENTS = {"order_id": 7, "amount": 20}
RESULT = {"content": [{"type": "text", "text": "refunded"}]}


class Upstream:
    """Stands in for the session pool: answers every call with `outcome`, or raises it."""

    def __init__(self, outcome):
        self.outcome, self.arguments = outcome, []

    def __call__(self):
        return self

    async def get(self, spec):
        return self

    async def call_tool(self, name, arguments, **options):
        self.arguments.append(arguments)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.fixture
def upstream(monkeypatch):
    def answer_with(outcome):
        fake = Upstream(outcome)
        monkeypatch.setattr(upstream_call, "session_pool", fake)
        return fake

    return answer_with


@pytest.fixture
def allow_all(db):
    PolicyRule.objects.create(action="allow", tool_glob="*")


async def start(token, arguments=ARGUMENTS):
    async def emit(message):
        pass

    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    params = {"name": "shop_issue_refund", "arguments": arguments}
    return asyncio.create_task(runner.run_call(ctx, 1, params, emit))


async def trail():
    """(action, actor type, actor name) of every call event, in order; the chain verified on the way."""
    verdict = await sync_to_async(verify.verify_chain)()
    assert verdict.ok, verdict.summary()
    return [
        row
        async for row in AuditEvent.objects.exclude(call_id=None)
        .order_by("seq")
        .values_list("action", "actor_type", "actor_name")
    ]


async def event(action):
    return await AuditEvent.objects.aget(action=action)


async def test_it_records_an_allowed_call_from_arrival_to_result(client_token, refund_tool, allow_all, upstream):
    upstream(RESULT)
    result = await (await start(client_token))
    assert result == RESULT
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.forwarded", "system", "system"),
        ("call.completed", "system", "system"),
    ]
    assert (await event("call.received")).data == {
        "tool": "shop_issue_refund",
        "arguments": ARGUMENTS,
        "arguments_digest": sha256_digest(ARGUMENTS),
        "arguments_bytes": len(canonical_json(ARGUMENTS)),
    }
    assert (await event("call.policy")).data["action"] == "allow"
    completed = (await event("call.completed")).data
    assert (
        completed["result"]["result_bytes"] > 0
        and completed["result"]["result"] == RESULT
        and completed["latency_ms"] >= 0
        and completed["error"] == ""
    )


async def test_it_records_an_approval_by_the_operator_who_gave_it(client_token, refund_tool, operators, upstream):
    upstream(RESULT)
    waiting = await start(client_token)
    call = await wait_for_pending_call()
    assert (await sync_to_async(deciding.decide)(call.pk, operators[0], True, "fine")).won
    assert await waiting == RESULT
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.pending", "system", "system"),
        ("call.approved", "user", "ann"),
        ("call.forwarded", "system", "system"),
        ("call.completed", "system", "system"),
    ]
    assert (await event("call.approved")).data == {"reason": "fine", "via": "queue"}


async def test_it_records_a_denial_and_its_reason(client_token, refund_tool, operators, upstream):
    fake = upstream(RESULT)
    waiting = await start(client_token)
    call = await wait_for_pending_call()
    await sync_to_async(deciding.decide)(call.pk, operators[1], False, "too much")
    assert (await waiting)["isError"] is True
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.pending", "system", "system"),
        ("call.denied", "user", "bob"),
    ]
    assert (await event("call.denied")).data == {"reason": "too much", "via": "queue"} and fake.arguments == []


async def test_it_records_edited_arguments_and_forwards_the_edited_ones(client_token, refund_tool, operators, upstream):
    fake = upstream(RESULT)
    waiting = await start(client_token)
    call = await wait_for_pending_call()
    edited = {"order_id": 7, "amount": 5}
    assert (await sync_to_async(deciding.decide)(call.pk, operators[0], True, edited_arguments=edited)).won
    await waiting
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.pending", "system", "system"),
        ("call.edited", "user", "ann"),
        ("call.approved", "user", "ann"),
        ("call.forwarded", "system", "system"),
        ("call.completed", "system", "system"),
    ]
    edit = (await event("call.edited")).data
    assert (edit["before"], edit["after"], edit["after_digest"]) == (ARGUMENTS, edited, sha256_digest(edited))
    assert (await event("call.forwarded")).data["arguments"] == edited and fake.arguments == [edited]


async def test_it_records_a_call_that_expired_unanswered(client_token, refund_tool, upstream, settings):
    upstream(RESULT)
    settings.APPROVAL_TIMEOUT_SECONDS = 0.3
    settings.CALL_REREAD_SECONDS = 0.05
    result = await (await start(client_token))
    assert result["isError"] is True
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.pending", "system", "system"),
        ("call.expired", "system", "system"),
    ]


async def test_it_records_a_call_the_client_cancelled(client_token, refund_tool, upstream):
    upstream(RESULT)
    waiting = await start(client_token)
    call = await wait_for_pending_call()
    # Its row committed, the request may not have taken up the written call yet: a request cancelled before it holds
    # its call leaves the call's cancellation to the loop, after the request has ended.
    await eventually(lambda: call.pk in holding.loop_held().waiting, message="the call held by its request")
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.pending", "system", "system"),
        ("call.cancelled", "client", "agent"),
    ]


async def test_it_records_an_upstream_failure_with_its_error(client_token, refund_tool, allow_all, upstream):
    upstream(UpstreamError("connection refused", retryable=True))
    result = await (await start(client_token))
    assert result["isError"] is True
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.forwarded", "system", "system"),
        ("call.failed", "system", "system"),
    ]
    failed = (await event("call.failed")).data
    assert failed["error"] == "connection refused" and "latency_ms" in failed


async def test_it_records_a_denial_by_policy_without_an_operator(client_token, refund_tool):
    await PolicyRule.objects.acreate(
        action="deny", tool_glob="shop_*", message="refunds go through the shop", name="no refunds"
    )
    result = await (await start(client_token))
    assert result["isError"] is True
    assert await trail() == [
        ("call.received", "client", "agent"),
        ("call.policy", "system", "system"),
        ("call.denied", "system", "system"),
    ]
    assert (await event("call.denied")).data == {"reason": "refunds go through the shop", "rule": "no refunds"}
