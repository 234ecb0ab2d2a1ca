"""The Slack channel a rule or a server names, set on its form, in a rule file, and checked as Slack names them."""

import pytest
from django.urls import reverse

from approvals.catalog.models import Server
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.policy.rule_files import read_rules_file
from tests.fixtures.catalog import make_server
from tests.pages.test_policy_pages import form_data
from tests.pages.test_server_form import edit


def test_a_rule_form_sets_a_channel_and_refuses_what_is_not_one(admin_client):
    refused = admin_client.post(reverse("rule_add"), form_data(action="ask", slack_channel="#two words"))
    assert refused.status_code == 200 and "Name a Slack channel" in refused.content.decode()
    assert not PolicyRule.objects.exists()
    admin_client.post(reverse("rule_add"), form_data(action="ask", slack_channel="#approvals"))
    assert PolicyRule.objects.get().slack_channel == "#approvals"


def test_a_server_form_sets_a_channel_and_refuses_what_is_not_one(admin_client, monkeypatch):
    monkeypatch.setattr("approvals.tasks.sync_server.delay", lambda pk: None)
    server = make_server()
    refused = edit(admin_client, server, slack_channel="<#C1|x>")
    assert refused.status_code == 200 and "Name a Slack channel" in refused.content.decode()
    edit(admin_client, server, slack_channel="C0123ABCD")
    assert Server.objects.get(pk=server.pk).slack_channel == "C0123ABCD"


@pytest.mark.parametrize(("channel", "problem"), [("#approvals", False), ("C0123", False), ("a b", True), ("", False)])
def test_a_rule_file_carries_the_channel(db, channel, problem):
    text = f'{{"version": 1, "rules": [{{"uid": "{"0" * 8}-0000-4000-8000-{"0" * 12}", "action": "ask", '
    text += f'"slack_channel": "{channel}"}}]}}'
    if problem:
        with pytest.raises(rules.RuleError, match="Slack channel"):
            read_rules_file(text)
        return
    [(_, request)] = read_rules_file(text)
    assert rules.create_rule(request).slack_channel == channel
