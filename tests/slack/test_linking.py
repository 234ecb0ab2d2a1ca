"""A Slack user linked to a console person: from the link an unlinked click is answered with, or by email."""

import re

import pytest
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.slack import linking
from approvals.slack.models import SlackLink
from tests.slack.conftest import TEAM, ask_rule, buttons, click, held_call, interact, posted_message


@pytest.fixture
def shown(slack, client_token, refund_tool):
    ask_rule(slack_channel="#approvals")
    call = held_call(client_token, refund_tool)
    posted_message(call)
    return call, buttons(slack.sent("chat.postMessage")[0])


def link_path(told: dict) -> str:
    url = re.search(r"<(https://console\.example\.com(/[^|>]+))\|", told["text"])
    return url[2]


def test_it_links_a_slack_user_from_the_link_it_was_told_then_decides_as_them(client, slack, shown, person):
    call, buttons = shown
    interact(client, click("approve", buttons["approve"]["value"], user="U0ANN"))
    path = link_path(slack.saying("chat.postEphemeral", "not linked"))
    ann, browser = person("ann", "operator")
    page = browser.get(path)
    assert page.status_code == 200 and f"{TEAM}:U0ANN" in page.content.decode()
    assert not SlackLink.objects.exists()
    assert browser.post(path).status_code == 302
    link = SlackLink.objects.get()
    assert (link.user, link.team_id, link.slack_user_id, link.how) == (ann, TEAM, "U0ANN", "account")
    assert AuditEvent.objects.get(action="slack.linked").data["slack_user"] == f"{TEAM}:U0ANN"
    interact(client, click("approve", buttons["approve"]["value"], user="U0ANN"))
    assert Call.objects.get(pk=call.pk).decided_by_name == "ann"


def test_it_refuses_a_link_not_signed_by_the_console(person, db):
    _, browser = person("ann", "operator")
    note = linking.link_url("", TEAM, "U0ANN", "ann").rsplit("/", 2)[-2]
    forged = reverse("slack_link", args=[note[:-3] + "abc"])
    answer = browser.post(forged)
    assert answer.status_code == 302 and not SlackLink.objects.exists()


def test_it_refuses_a_link_older_than_fifteen_minutes(person, db, monkeypatch):
    _, browser = person("ann", "operator")
    path = linking.link_url("", TEAM, "U0ANN", "ann")
    monkeypatch.setattr(linking, "LINK_MAX_AGE_SECONDS", -1)
    browser.post(path)
    assert not SlackLink.objects.exists()


def test_it_asks_a_visitor_to_sign_in_before_linking(client, db):
    path = linking.link_url("", TEAM, "U0ANN", "ann")
    answer = client.post(path)
    assert answer.status_code == 302 and reverse("login") in answer["Location"]
    assert not SlackLink.objects.exists()


def test_the_account_page_shows_and_unlinks_a_slack_user(slack, person):
    ann, browser = person("ann", "operator")
    link = linking.link(ann, TEAM, "U0ANN", "ann", SlackLink.How.ACCOUNT)
    page = browser.get(reverse("account")).content.decode()
    assert f"{TEAM}:U0ANN" in page and reverse("slack_unlink", args=[link.pk]) in page
    _, other = person("bob", "operator")
    other.post(reverse("slack_unlink", args=[link.pk]))
    assert SlackLink.objects.exists()
    browser.post(reverse("slack_unlink", args=[link.pk]))
    assert not SlackLink.objects.exists()
    assert AuditEvent.objects.get(action="slack.unlinked").actor_name == "ann"


CONFIRMED = {"id": "U0BOB", "name": "bob", "is_email_confirmed": True, "profile": {"email": "Bob@Example.com"}}


@pytest.mark.parametrize(
    ("allowed", "user", "decided"),
    [
        pytest.param(True, CONFIRMED, True, id="confirmed"),
        pytest.param(True, {**CONFIRMED, "is_email_confirmed": False}, False, id="unconfirmed"),
        pytest.param(False, CONFIRMED, False, id="not-allowed"),
    ],
)
def test_it_links_by_a_confirmed_email_where_allowed(client, slack, shown, person, settings, allowed, user, decided):
    settings.SLACK_LINK_BY_EMAIL = allowed
    slack.users["U0BOB"] = user
    person("bob", "operator", email="bob@example.com")
    call, buttons = shown
    interact(client, click("approve", buttons["approve"]["value"], user="U0BOB"))
    assert (Call.objects.get(pk=call.pk).decided_by_name == "bob") is decided
    assert SlackLink.objects.filter(slack_user_id="U0BOB", how="email").exists() is decided
