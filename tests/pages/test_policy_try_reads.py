"""The Try page's forms for a resource read and a prompt get: the verdict shown as for a call."""

import pytest
from django.urls import reverse

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.catalog.surface_models import Prompt, Resource
from approvals.policy import rules
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server


@pytest.fixture
def agent(db):
    return create_token("agent")[0]


@pytest.fixture
def wiki(db):
    server = make_server("Wiki", tool_prefix="wiki_")
    item = {"server": server, "digest": "d"}
    Resource.objects.create(uri="wiki://home", upstream_name="home", exposed_name="wiki_home", definition={}, **item)
    arguments = {"arguments": [{"name": "topic", "required": True}]}
    Prompt.objects.create(upstream_name="summary", exposed_name="wiki_summary", definition=arguments, **item)
    return server


def test_it_tries_a_read_and_shows_the_rule_that_holds_it_and_how_it_would_be_decided(login, agent, wiki):
    rules.create_rule(
        rules.RuleRequest("ask", applies_to="resource", tool_glob="wiki://*", name="wiki reads", approvals_needed=2)
    )
    auditor = login(roles.AUDITOR)
    events = AuditEvent.objects.count()

    page = auditor.get(reverse("policy_try"), {"read-token": agent.pk, "read-uri": "wiki://home"})

    text = page.content.decode()
    assert page.context["outcome"].verdict.rule_name == "wiki reads"
    assert "<h2 data-decision>ask, by wiki reads</h2>" in text
    assert "It would wait for 2 operator approvals" in text
    assert AuditEvent.objects.count() == events and not Call.objects.exists()


def test_it_tries_a_prompt_get_and_shows_a_deny_rules_message(login, agent, wiki):
    request = rules.RuleRequest(
        "deny", applies_to="prompt", tool_glob="wiki_*", name="no wiki prompts", message="Ask Al."
    )
    rules.create_rule(request)
    query = {"prompt-token": agent.pk, "prompt-prompt": "wiki_summary", "prompt-arguments": '{"topic": "cats"}'}

    text = login(roles.OPERATOR).get(reverse("policy_try"), query).content.decode()

    assert "<h2 data-decision>deny, by no wiki prompts</h2>" in text
    assert "The client would be told: Ask Al." in text


def test_it_says_a_read_no_rule_names_runs_at_once_unrecorded(admin_client, agent, wiki):
    text = admin_client.get(reverse("policy_try"), {"read-token": agent.pk, "read-uri": "wiki://home"}).content.decode()

    assert "<h2 data-decision>allow: no rule matched</h2>" in text
    assert "it would run at once and not be recorded as a call" in text


def test_it_warns_of_a_prompts_missing_arguments_and_refuses_bad_json_without_a_500(admin_client, agent, wiki):
    missing = {"prompt-token": agent.pk, "prompt-prompt": "wiki_summary", "prompt-arguments": "{}"}
    broken = {**missing, "prompt-arguments": "[1, 2"}

    warned = admin_client.get(reverse("policy_try"), missing).content.decode()
    refused = admin_client.get(reverse("policy_try"), broken)

    assert "do not fit the prompt's declared arguments" in warned and "missing required topic" in warned
    assert refused.status_code == 200 and refused.context["outcome"] is None
    assert "Not valid JSON" in refused.context["getting"].errors["arguments"][0]
