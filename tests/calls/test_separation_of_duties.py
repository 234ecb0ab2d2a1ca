"""Separation of duties: an operator who owns the calling token cannot approve its calls; page, POST and decide."""

import pytest
from django.core.management import CommandError
from django.urls import reverse

from approvals import roles
from approvals.calls import deciding, lifecycle
from approvals.calls.models import Call, CallApproval
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.commands.conftest import run

OWNS = "You own the token agent that made this call"


def held_call(token, tool):
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")
    call, _ = lifecycle.receive_call(ctx, tool, {"order_id": 7, "amount": 20}, 1, None)
    assert call.status == Call.Status.PENDING
    return call


@pytest.fixture
def owner(person, client_token):
    """Olga, an operator who owns the token "agent", and her signed-in test client."""
    user, browser = person("olga", roles.OPERATOR)
    client_token.owner = user
    client_token.save(update_fields=["owner"])
    return user, browser


@pytest.mark.parametrize(
    "separation, console_default, applies",
    [
        ("require", False, True),
        ("off", True, False),
        ("inherit", True, True),
        ("inherit", False, False),
    ],
)
def test_it_takes_separation_of_duties_from_the_rule_or_the_console_default(
    client_token, refund_tool, settings, separation, console_default, applies
):
    settings.SEPARATION_OF_DUTIES = console_default
    rules.create_rule(rules.RuleRequest("ask", name="refunds", separation_of_duties=separation))
    assert held_call(client_token, refund_tool).separation_of_duties is applies


def test_it_applies_the_console_default_to_a_call_no_rule_matched(client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    assert held_call(client_token, refund_tool).separation_of_duties is True


def test_it_shows_the_owner_a_disabled_approve_button_with_the_reason(owner, client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    call = held_call(client_token, refund_tool)
    _, browser = owner
    page = browser.get(reverse("queue")).content.decode()
    assert f'aria-describedby="refusal-{call.pk}-queue"' in page
    assert 'data-key="a" disabled' in page
    assert OWNS in page
    assert reverse("call_edit", args=[call.pk]) not in page, "edit then approve is an approval too"
    assert OWNS in browser.get(reverse("call", args=[call.pk])).content.decode()


def test_it_lets_another_operator_approve_what_the_owner_may_not(owner, person, client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    call = held_call(client_token, refund_tool)
    _, other = person("ann", roles.OPERATOR)
    page = other.get(reverse("queue")).content.decode()
    assert OWNS not in page and "disabled" not in page.split("approve-form")[1].split("</form>")[0]
    response = other.post(
        reverse("call_decide", args=[call.pk]), {"decision": "approve", "binding": lifecycle.call_binding(call)}
    )
    assert response.status_code == 302
    call.refresh_from_db()
    assert call.status == Call.Status.APPROVED


def test_it_refuses_the_owners_approval_posted_anyway(owner, client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    call = held_call(client_token, refund_tool)
    _, browser = owner
    response = browser.post(
        reverse("call_decide", args=[call.pk]),
        {"decision": "approve", "binding": lifecycle.call_binding(call)},
        HTTP_ACCEPT="application/json",
    )
    assert response.json()["level"] == "warning"
    assert OWNS in response.json()["message"]
    edited = browser.post(reverse("call_edit", args=[call.pk]), {"arg-order_id": "7", "arg-amount": "1"})
    assert edited.status_code == 302
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING and not CallApproval.objects.exists()


def test_it_lets_the_owner_deny_their_own_agents_call(owner, client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    call = held_call(client_token, refund_tool)
    assert deciding.decide(call.pk, owner[0], False, "my agent should not do this").won


def test_it_lets_the_owner_approve_when_the_rule_turns_separation_off(owner, client_token, refund_tool, settings):
    settings.SEPARATION_OF_DUTIES = True
    rules.create_rule(rules.RuleRequest("ask", name="refunds", separation_of_duties="off"))
    call = held_call(client_token, refund_tool)
    assert deciding.decide(call.pk, owner[0], True).won


def test_it_refuses_the_owners_approval_from_the_decide_command(owner, client_token, refund_tool):
    rules.create_rule(rules.RuleRequest("ask", name="refunds", separation_of_duties="require"))
    call = held_call(client_token, refund_tool)
    with pytest.raises(CommandError, match=f"call {call.pk} was not approved: {OWNS}"):
        run("decide", str(call.pk), "approve", "--as", "olga")
    call.refresh_from_db()
    assert call.status == Call.Status.PENDING
