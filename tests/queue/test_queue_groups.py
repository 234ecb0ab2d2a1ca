"""The queue in pages of calls grouped by client and tool, filtered, and decided several calls at once."""

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call
from approvals.display import rows
from approvals.display.queue import QueueFilter
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.views.consumers import OperatorConsumer
from tests.fixtures.sockets import open_socket, signed_in

SAME = {"order_id": 7, "amount": 20}


@pytest.fixture
def other_token(db):
    return create_token("robot-3")[0]


def pending_from(token, tool, arguments):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    call, answer = lifecycle.receive_call(ctx, tool, arguments, 1, None)
    assert answer is None
    return call


def group_heads(page: str) -> list[str]:
    return [part.split('"', 1)[0] for part in page.split('data-group="')[1:]]


def selected(*calls):
    return [f"{call.pk}:{lifecycle.call_binding(call)}" for call in calls]


def bulk_post(client, calls, decision, reason="", follow=False, **data):
    data = {"call": selected(*calls), "decision": decision, "reason": reason, **data}
    return client.post(reverse("queue_bulk"), data, follow=follow)


def test_it_groups_calls_by_client_and_tool_oldest_group_first_with_their_counts(
    person, make_call, client_token, other_token, refund_tool, ship_tool
):
    first = make_call(refund_tool, SAME)
    make_call(ship_tool, {"address": {"city": "Lyon"}})
    pending_from(other_token, refund_tool, SAME)
    make_call(refund_tool, {"order_id": 8, "amount": 1})
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("queue")).content.decode()
    assert group_heads(page) == [
        f"{client_token.pk}:shop_issue_refund",
        f"{client_token.pk}:shop_ship",
        f"{other_token.pk}:shop_issue_refund",
    ]
    refunds = page[page.index(f'data-group="{client_token.pk}:shop_issue_refund"') : page.index("shop_ship</code>")]
    assert "<span data-group-count>2</span> pending" in refunds and f'id="call-{first.pk}"' in refunds


def test_it_pages_the_queue_and_lets_a_group_run_over_to_the_next_page(person, make_call, refund_tool, settings):
    settings.QUEUE_PAGE_SIZE = 3
    calls = [make_call(refund_tool, {"order_id": n, "amount": 1}) for n in range(5)]
    _, client = person("pat", roles.OPERATOR)
    first = client.get(reverse("queue")).content.decode()
    second = client.get(reverse("queue"), {"page": 2}).content.decode()
    assert [f'id="call-{c.pk}"' in first for c in calls] == [True, True, True, False, False]
    assert [f'id="call-{c.pk}"' in second for c in calls] == [False, False, False, True, True]
    assert "1–3 shown here" in first and 'data-group-ends="false"' in first and 'data-last-page="false"' in first
    assert "4–5 shown here" in second and 'data-group-ends="true"' in second and "Page 2 of 2, 5 calls" in second
    # A decision taken without the page's script comes back to this page.
    # Each row's two decisions and its claim come back to this page, as does the bulk form.
    assert second.count('name="next" value="/queue/?page=2"') == 2 * 3 + 1


@pytest.mark.parametrize("query", [{"page": "x"}, {"page": "999999999999999"}, {"client": "-1", "server": "a"}])
def test_it_shows_a_page_for_any_page_or_filter_it_is_given(person, refund_call, query):
    _, client = person("pat", roles.OPERATOR)
    response = client.get(reverse("queue"), query)
    assert response.status_code == 200 and f'id="call-{refund_call.pk}"' in response.content.decode()


def test_it_filters_by_client_tool_and_server(person, make_call, other_token, refund_tool, ship_tool, shop):
    mine = make_call(refund_tool, SAME)
    shipped = make_call(ship_tool, {"address": {"city": "Lyon"}})
    theirs = pending_from(other_token, refund_tool, SAME)
    _, client = person("pat", roles.OPERATOR)

    def shown(**query):
        page = client.get(reverse("queue"), query).content.decode()
        return {call.pk for call in (mine, shipped, theirs) if f'id="call-{call.pk}"' in page}

    assert shown(client=other_token.pk) == {theirs.pk}
    assert shown(tool="shop_ship") == {shipped.pk}
    assert shown(server=shop.pk) == {mine.pk, shipped.pk, theirs.pk}
    assert shown(server=shop.pk + 1) == set()


def test_it_denies_the_selected_calls_with_one_reason_each_through_the_decision_path(
    person, make_call, refund_tool, ship_tool
):
    calls = [make_call(refund_tool, SAME), make_call(ship_tool, {"address": {"city": "Lyon"}})]
    untouched = make_call(refund_tool, SAME)
    _, client = person("ann", roles.OPERATOR)
    response = bulk_post(client, calls, "deny", "not today", next="/queue/?page=1")
    assert response.status_code == 302 and response["Location"] == "/queue/?page=1"
    for call in calls:
        call.refresh_from_db()
        assert (call.status, call.reason, call.decided_by_name) == (Call.Status.DENIED, "not today", "ann")
        denied = AuditEvent.objects.get(call_id=call.pk, action="call.denied")
        assert (denied.actor_name, denied.data["reason"]) == ("ann", "not today")
    untouched.refresh_from_db()
    assert untouched.status == Call.Status.PENDING


def test_it_refuses_a_bulk_denial_without_a_reason(person, refund_call):
    _, client = person("ann", roles.OPERATOR)
    page = bulk_post(client, [refund_call], "deny", "  ", follow=True).content.decode()
    assert "Give a reason for the denial" in page
    refund_call.refresh_from_db()
    assert refund_call.status == Call.Status.PENDING


def test_it_approves_together_only_calls_to_one_tool_with_the_same_arguments(person, make_call, refund_tool, ship_tool):
    twins = [make_call(refund_tool, SAME), make_call(refund_tool, dict(reversed(SAME.items())))]
    other_arguments = make_call(refund_tool, {"order_id": 8, "amount": 20})
    other_tool = make_call(ship_tool, {"address": {"city": "Lyon"}})
    _, client = person("ann", roles.OPERATOR)
    page = bulk_post(client, [twins[0], other_tool], "approve", follow=True).content.decode()
    assert "needs one tool" in page and "shop_issue_refund, shop_ship" in page
    page = bulk_post(client, [twins[0], other_arguments], "approve", follow=True).content.decode()
    assert "same arguments" in page
    assert Call.objects.filter(status=Call.Status.PENDING).count() == 4
    page = bulk_post(client, twins, "approve", follow=True).content.decode()
    assert "Approved 2 calls." in page
    assert set(Call.objects.filter(status=Call.Status.APPROVED).values_list("pk", flat=True)) == {t.pk for t in twins}


def test_it_counts_a_bulk_approval_as_one_of_a_quorum(person, make_call, refund_tool):
    rules.create_rule(rules.RuleRequest("ask", tool_glob="*", name="two people", approvals_needed=2))
    twins = [make_call(refund_tool, SAME) for _ in range(2)]
    _, ann = person("ann", roles.OPERATOR)
    page = bulk_post(ann, twins, "approve", follow=True).content.decode()
    assert "Approved" not in page and page.count("Approval recorded: 1 of 2 approvals: ann") == 2
    _, bob = person("bob", roles.OPERATOR)
    assert "Approved 2 calls." in bulk_post(bob, twins, "approve", follow=True).content.decode()
    assert {Call.objects.get(pk=c.pk).status for c in twins} == {Call.Status.APPROVED}


def test_it_decides_the_rest_when_someone_decided_one_of_the_selection_first(person, make_call, refund_tool):
    calls = [make_call(refund_tool, SAME) for _ in range(3)]
    bob, _ = person("bob", roles.OPERATOR)
    deciding.decide(calls[1].pk, bob, True)
    _, client = person("ann", roles.OPERATOR)
    page = bulk_post(client, calls, "deny", "no", follow=True).content.decode()
    assert "Denied 2 calls." in page and f"Call {calls[1].pk} (shop_issue_refund): Already approved by bob." in page
    assert [Call.objects.get(pk=c.pk).status for c in calls] == ["denied", "approved", "denied"]


def test_it_refuses_bulk_decisions_to_an_auditor(person, refund_call):
    _, client = person("aud", roles.AUDITOR)
    assert bulk_post(client, [refund_call], "deny", "no").status_code == 403
    page = client.get(reverse("queue")).content.decode()
    assert 'form="bulk"' not in page and "Deny selected" not in page


@pytest.mark.django_db(transaction=True)
async def test_it_pushes_a_new_call_with_its_group_and_count_only_to_pages_whose_filter_it_matches(
    person, make_call, refund_tool, ship_tool
):
    cookie = await signed_in(person, "ann", roles.OPERATOR)
    shipping, connected = await open_socket(cookie, query="view=queue&tool=shop_ship")
    assert connected
    everything, connected = await open_socket(cookie)
    assert connected
    await sync_to_async(make_call)(refund_tool, SAME)
    call = await sync_to_async(make_call)(refund_tool, {"order_id": 9, "amount": 2})
    for _ in range(2):
        message = await everything.receive_json_from(timeout=5)
    assert message["call_id"] == call.pk and message["group"] == f"{call.token_id}:shop_issue_refund"
    assert message["group_count"] == 2 and 'data-group-ends="true"' in message["html"]
    assert f'id="call-{call.pk}"' in message["html"] and "<span data-group-count>2</span>" in message["html"]
    filtered = [await shipping.receive_json_from(timeout=5) for _ in range(2)]
    assert [m["event"] for m in filtered] == ["call.pending"] * 2 and filtered[-1]["pending_count"] == 2
    assert not any("html" in m or "group" in m for m in filtered)
    await shipping.disconnect()
    await everything.disconnect()


def test_it_reads_a_full_page_in_as_many_queries_as_a_page_of_a_few_calls(person, make_call, refund_tool, settings):
    settings.QUEUE_PAGE_SIZE, settings.MAX_PENDING_CALLS_PER_TOKEN = 20, 0
    rules.create_rule(rules.RuleRequest("ask", tool_glob="*", name="two people", approvals_needed=2))
    ann, _ = person("ann", roles.OPERATOR)
    _, client = person("pat", roles.OPERATOR)

    def page_queries():
        with CaptureQueriesContext(connection) as captured:
            page = client.get(reverse("queue")).content.decode()
        return len(captured.captured_queries), page.count("1 of 2 approvals: ann")

    def approved_once(count):
        for n in range(count):
            deciding.decide(make_call(refund_tool, {"order_id": n, "amount": 1}).pk, ann, True)

    approved_once(2)
    few, shown = page_queries()
    assert shown == 2
    approved_once(40)
    assert page_queries() == (few, 20)


def queue_socket(user, queue_filter: QueueFilter | None = None) -> OperatorConsumer:
    socket = OperatorConsumer()
    socket.view, socket.request = "queue", rows.fragment_request(user, {})
    socket.queue_filter = queue_filter or QueueFilter()
    assert roles.can_decide(user)  # read once per socket, as its user's permissions are
    return socket


def test_it_counts_a_pushed_call_s_group_and_the_whole_queue_in_one_query(
    person, make_call, other_token, refund_tool, ship_tool, settings, django_assert_max_num_queries
):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 0
    for n in range(3):
        make_call(ship_tool, {"address": {"city": f"Lyon {n}"}})
        pending_from(other_token, refund_tool, SAME)
    arriving = make_call(refund_tool, SAME)
    user, _ = person("pat", roles.OPERATOR)
    socket = queue_socket(user)
    # The call's row, then both counts at once.
    with django_assert_max_num_queries(2):
        (payload,) = socket.call_payloads([("call.pending", arriving.pk)])
    assert (payload["pending_count"], payload["group"], payload["group_count"]) == (
        7,
        f"{arriving.token_id}:shop_issue_refund",
        1,
    )
    assert f'data-call-row="{arriving.pk}"' in payload["html"]


def test_it_reads_a_burst_of_events_in_as_many_queries_as_one_event(
    person, make_call, other_token, refund_tool, ship_tool, settings, django_assert_max_num_queries
):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 0
    decided = make_call(ship_tool, {"address": {"city": "Lyon"}})
    arriving = [make_call(refund_tool, {"order_id": n, "amount": 1}) for n in range(12)]
    arriving += [pending_from(other_token, refund_tool, SAME) for _ in range(3)]
    user, _ = person("pat", roles.OPERATOR)
    deciding.decide(decided.pk, user, False, "no")
    socket = queue_socket(user)
    burst = [("call.pending", call.pk) for call in arriving] + [("call.decided", decided.pk)]

    # The decided call's own row, the arriving calls with their tools, servers and clients, and every count.
    with django_assert_max_num_queries(3):
        payloads = socket.call_payloads(burst)

    assert [p["call_id"] for p in payloads] == [call_id for _, call_id in burst]
    assert {p["pending_count"] for p in payloads} == {15}
    assert [p["group_count"] for p in payloads[:12]] == [12] * 12
    assert [p["group_count"] for p in payloads[12:15]] == [3] * 3
    assert all(f'data-call-row="{call.pk}"' in p["html"] for call, p in zip(arriving, payloads, strict=False))
    assert (
        payloads[-1]["status"] == "denied"
        and "html" not in payloads[-1]
        and payloads[-1]["outcome"].startswith("Denied")
    )


def test_it_pushes_no_row_for_a_call_of_the_same_group_that_the_page_s_filter_leaves_out(
    person, make_call, refund_tool, settings
):
    settings.MAX_PENDING_CALLS_PER_TOKEN = 0
    shown, left_out = make_call(refund_tool, SAME), make_call(refund_tool, SAME)
    Call.objects.filter(pk=left_out.pk).update(server=None)
    user, _ = person("pat", roles.OPERATOR)
    socket = queue_socket(user, QueueFilter(server=refund_tool.server_id))

    first, second = socket.call_payloads([("call.pending", shown.pk), ("call.pending", left_out.pk)])

    assert first["group_count"] == 1 and f'data-call-row="{shown.pk}"' in first["html"]
    assert "html" not in second and "group" not in second and second["pending_count"] == 2


def test_it_approves_together_only_calls_with_one_binding_edits_and_tool_definition_included(
    person, make_call, refund_tool
):
    rules.create_rule(rules.RuleRequest("ask", tool_glob="*", name="two people", approvals_needed=2))
    edited, plain, redefined = (make_call(refund_tool, SAME) for _ in range(3))
    bob, _ = person("bob", roles.OPERATOR)
    deciding.decide(edited.pk, bob, True, edited_arguments={"order_id": 7, "amount": 2})
    edited.refresh_from_db()
    Call.objects.filter(pk=redefined.pk).update(tool_digest="another definition")
    redefined.refresh_from_db()
    _, ann = person("ann", roles.OPERATOR)
    for pair in ([edited, plain], [plain, redefined]):
        page = bulk_post(ann, pair, "approve", follow=True).content.decode()
        assert "the same tool definition" in page
    assert not Call.objects.filter(approvals__username="ann").exists()


def test_it_refuses_a_bulk_approval_whose_calls_were_shown_with_different_bindings(person, make_call, refund_tool):
    twins = [make_call(refund_tool, SAME) for _ in range(2)]
    _, ann = person("ann", roles.OPERATOR)
    boxes = [f"{twins[0].pk}:{lifecycle.call_binding(twins[0])}", f"{twins[1].pk}:{'0' * 64}"]
    page = ann.post(reverse("queue_bulk"), {"call": boxes, "decision": "approve"}, follow=True).content.decode()
    assert "the selected calls differ" in page
    assert {Call.objects.get(pk=c.pk).status for c in twins} == {Call.Status.PENDING}
