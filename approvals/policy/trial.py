"""Trying a call against the policy without running anything, for the admin's Try page.

It takes the path a real call takes up to the decision, with the same rules and the
same evaluate(), and stops there: nothing is recorded and nothing goes upstream.
"""

from dataclasses import dataclass

from approvals.calls import lifecycle, permissions
from approvals.models import ClientToken, PolicyRule, Tool
from approvals.policy import engine
from approvals.protocol import permission_prompt
from approvals.protocol.schemas import validate
from approvals.tokens.credentials import token_allows


@dataclass
class Tried:
    rule: PolicyRule
    trial: engine.Trial


@dataclass
class Outcome:
    verdict: engine.Verdict
    tried: list  # Tried, in order
    untried: list  # the enabled rules below the one that decided
    disabled: int
    stopped: str  # why a real call would not even reach the policy, or ""
    argument_errors: list


def try_call(token: ClientToken, tool: Tool, arguments: dict) -> Outcome:
    stopped = ""
    if token.revoked:
        stopped = f"The token {token.name} is revoked: the call would be refused before any rule is tried."
    elif not token_allows(token, tool.exposed_name):
        stopped = f"The token {token.name} may not use {tool.exposed_name}: the client would not find the tool."
    elif not tool.server.enabled:
        stopped = f"The server {tool.server.name} is disabled: the client would not find the tool."
    elif tool.status != Tool.Status.ACTIVE:
        stopped = f"{tool.exposed_name} awaits review or was rejected: the call would be refused, not decided."
    errors = validate(tool.definition.get("inputSchema") or {}, arguments)
    return outcome(lifecycle.call_facts(token, tool, arguments), stopped, errors)


def try_permission(token: ClientToken, tool_name: str, tool_input: dict) -> Outcome:
    """A coding agent's permission request for its tool `tool_name`, tried as try_call tries a call."""
    stopped = ""
    if token.revoked:
        stopped = f"The token {token.name} is revoked: the request would be refused before any rule is tried."
    elif not token_allows(token, permission_prompt.NAME):
        stopped = f"The token {token.name} may not use {permission_prompt.NAME}: the agent could not ask."
    return outcome(permissions.facts(token, tool_name, tool_input), stopped, [])


def outcome(facts: engine.CallFacts, stopped: str, errors: list) -> Outcome:
    verdict = engine.evaluate(lifecycle.policy_rules(), facts)
    listed = {rule.pk: rule for rule in PolicyRule.objects.select_related("server", "client")}
    tried = {trial.rule.id for trial in verdict.trials}
    return Outcome(
        verdict=verdict,
        tried=[Tried(listed[trial.rule.id], trial) for trial in verdict.trials if trial.rule.id in listed],
        untried=[rule for rule in listed.values() if rule.enabled and rule.pk not in tried],
        disabled=sum(not rule.enabled for rule in listed.values()),
        stopped=stopped,
        argument_errors=errors,
    )
