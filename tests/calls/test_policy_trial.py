"""The policy's trial for each kind: what it says a tool call, a permission request, a read or a prompt get would get.

A read and a prompt get are tried with the facts and rules the gateway uses, so the trial says what a real
one would meet: the last tests hold it to what the gateway records for the same read.
"""

import pytest
from django.utils import timezone

from approvals.actions import trial
from approvals.calls import reads
from approvals.calls.models import Call
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from tests.fixtures.catalog import make_server, make_tool


def add_rule(action, applies_to, pattern="*", **fields):
    return rules.create_rule(rules.RuleRequest(action, applies_to=applies_to, tool_glob=pattern, **fields))


@pytest.fixture
def docs(db):
    """A server with a resource, a template and a prompt that needs a `code` argument."""
    server = make_server("Docs", tool_prefix="docs_")
    item = {"server": server, "definition": {}, "digest": "d"}
    Resource.objects.create(uri="file://docs/guide.md", upstream_name="guide", exposed_name="docs_guide", **item)
    ResourceTemplate.objects.create(uri="notes://n/{id}", upstream_name="note", exposed_name="docs_note", **item)
    arguments = [{"name": "code", "required": True}, {"name": "tone"}]
    Prompt.objects.create(
        server=server,
        upstream_name="review",
        exposed_name="docs_review",
        definition={"arguments": arguments},
        digest="d",
    )
    return server


@pytest.fixture
def review(docs):
    return Prompt.objects.get(exposed_name="docs_review")


@pytest.fixture
def rules_for_reads(docs):
    """Tools denied outright; docs read freely; any other read of Docs asked, of two operators."""
    add_rule("deny", "tool", name="no tools")
    add_rule("allow", "resource", "file://docs/*", name="docs are public")
    add_rule("ask", "resource", server="Docs", name="ask before other reads", approvals_needed=2)


def test_it_tries_a_read_of_a_listed_resource_and_the_read_rule_above_decides(client_token, rules_for_reads):
    outcome = trial.try_read(client_token, "file://docs/guide.md")

    assert (outcome.verdict.action, outcome.verdict.rule_name) == ("allow", "docs are public")
    assert outcome.tried[0].trial.misses == ("the rule applies to tool calls",)
    assert outcome.hold is None and not outcome.stopped and not outcome.unrecorded
    assert not Call.objects.exists()


def test_it_tries_a_read_a_template_routes_and_says_how_operators_would_decide_it(client_token, rules_for_reads):
    outcome = trial.try_read(client_token, "notes://n/3")

    assert (outcome.verdict.action, outcome.verdict.rule_name) == ("ask", "ask before other reads")
    assert outcome.tried[1].trial.misses == ("the URI notes://n/3 does not match 'file://docs/*'",)
    assert outcome.hold.approvals_needed == 2


def test_it_tries_a_read_by_its_uri_in_normal_form_and_stops_one_too_long(client_token, rules_for_reads, settings):
    settings.MAX_URI_BYTES = 40

    respelled = trial.try_read(client_token, "FILE://docs/drafts/../%67uide.md")
    too_long = trial.try_read(client_token, "file://docs/" + "x" * 30)

    assert (respelled.verdict.action, respelled.verdict.rule_name) == ("allow", "docs are public")
    assert "42 bytes long; this console takes URIs of at most 40 bytes: the client would be refused" in too_long.stopped


def test_it_says_a_read_no_rule_names_is_let_through_unrecorded(client_token, docs):
    add_rule("deny", "prompt", name="no prompts")

    outcome = trial.try_read(client_token, "file://docs/guide.md")

    assert outcome.verdict.action == "allow" and outcome.verdict.rule is None
    assert outcome.unrecorded and outcome.hold is None


def test_it_says_a_uri_the_token_cannot_reach_would_be_told_it_is_not_found(docs):
    narrow = create_token("narrow", tool_globs=["other_*"])[0]

    assert "the client would be told it is not found" in trial.try_read(narrow, "file://docs/guide.md").stopped
    assert "may read has the URI gopher://x" in trial.try_read(narrow, "gopher://x").stopped


def test_it_tries_a_prompt_with_its_arguments_against_a_rule_on_them(client_token, review):
    condition = {"path": "code", "op": "contains", "value": "rm -rf"}
    add_rule("deny", "prompt", "docs_*", conditions=[condition], name="no deletes", message="Not that code.")

    denied = trial.try_prompt(client_token, review, {"code": "rm -rf /"})
    allowed = trial.try_prompt(client_token, review, {"code": "print(1)"})

    assert (denied.verdict.action, denied.verdict.message) == ("deny", "Not that code.")
    assert allowed.verdict.rule is None and allowed.unrecorded
    assert allowed.tried[0].trial.misses == ('condition 1 (code contains "rm -rf") does not hold: code is "print(1)"',)


def test_it_checks_a_prompts_arguments_as_the_gateway_does(client_token, review):
    outcome = trial.try_prompt(client_token, review, {"mood": "grim"})

    assert outcome.argument_errors == ["Invalid arguments for prompt docs_review: missing required code; unknown mood"]


def test_it_says_a_prompt_of_a_disabled_server_would_be_unknown_to_the_client(client_token, review, docs):
    docs.enabled = False
    docs.save()

    stopped = trial.try_prompt(client_token, review, {"code": "x"}).stopped

    assert stopped == "The server Docs is disabled: the client would be told the prompt is unknown."


def test_it_tries_a_prompt_whose_change_awaits_review_as_it_was_accepted(client_token, review):
    accepted = review.definition
    review.definition = {"arguments": [{"name": "path", "required": True}]}
    review.status, review.reviewed_definition, review.reviewed_digest = Prompt.Status.NEEDS_REVIEW, accepted, "d"
    review.save()

    outcome = trial.try_prompt(client_token, review, {"code": "x"})

    assert not outcome.stopped and outcome.argument_errors == []


def test_it_says_a_new_prompt_awaiting_review_would_be_unknown_to_the_client(client_token, review):
    review.status = Prompt.Status.NEEDS_REVIEW
    review.save()

    stopped = trial.try_prompt(client_token, review, {"code": "x"}).stopped

    assert stopped == "docs_review awaits review or was rejected: the client would be told the prompt is unknown."


@pytest.mark.parametrize("kind", ["call", "permission", "read", "prompt"])
def test_it_says_a_revoked_token_would_never_reach_the_policy_whatever_it_asks(client_token, review, kind):
    tool = make_tool(review.server, "lookup")
    client_token.revoked_at = timezone.now()
    client_token.save()
    attempts = {
        "call": lambda: trial.try_call(client_token, tool, {}),
        "permission": lambda: trial.try_permission(client_token, "Bash", {}),
        "read": lambda: trial.try_read(client_token, "file://docs/guide.md"),
        "prompt": lambda: trial.try_prompt(client_token, review, {"code": "x"}),
    }

    assert "The token agent is revoked" in attempts[kind]().stopped


RECORDED = {"allow": Call.Status.FORWARDED, "ask": Call.Status.PENDING, "deny": Call.Status.DENIED}


@pytest.mark.parametrize("uri", ["file://docs/guide.md", "notes://n/3"])
def test_it_agrees_with_what_the_gateway_records_for_the_same_read(client_token, rules_for_reads, docs, uri):
    add_rule("deny", "resource", "notes://n/3", name="not note 3")
    rules.move_rule(rules.PolicyRule.objects.get(name="not note 3").pk, 1)
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")

    tried = trial.try_read(client_token, uri)
    call, _ = reads.receive_read(ctx, reads.Read(Call.Kind.RESOURCE, docs, uri, {"uri": uri}, "d"))

    assert call.status == RECORDED[tried.verdict.action]
    assert call.rule_name == tried.verdict.rule_name
