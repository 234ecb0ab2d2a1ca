"""Trying a call, a permission request, a resource read or a prompt get against the policy, for the admin's Try page.

It takes the path a real request takes up to the decision, with the same rules, the same facts
and the same evaluate(), and stops there: nothing is recorded and nothing goes upstream.
"""

from dataclasses import dataclass

from approvals.calls import hold_terms, lifecycle, permissions, reads
from approvals.calls.models import Call
from approvals.catalog import routes
from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Prompt
from approvals.policy import engine
from approvals.policy.models import PolicyRule
from approvals.protocol import permission_prompt
from approvals.protocol.jsonrpc import JsonRpcError
from approvals.protocol.schemas import validate
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken


@dataclass
class Tried:
    rule: PolicyRule
    trial: engine.Trial


@dataclass
class Hold:
    """How operators would decide what an ask verdict holds, as calls.hold_terms gives it."""

    timeout_seconds: float
    approvals_needed: int
    separation_of_duties: bool


@dataclass
class Outcome:
    kind: str  # engine.TOOL, PERMISSION, RESOURCE or PROMPT
    verdict: engine.Verdict
    tried: list  # Tried, in order
    untried: list  # the enabled rules below the one that decided
    disabled: int
    stopped: str  # why a real request would not even reach the policy, or ""
    argument_errors: list
    hold: Hold | None  # for an ask verdict

    @property
    def unrecorded(self) -> bool:
        """A read or prompt get that no rule names runs at once, not recorded as a call."""
        return self.verdict.rule is None and self.kind in (engine.RESOURCE, engine.PROMPT)


def refused_at_the_door(token: ClientToken, what: str, name: str | None = None, unreachable: str = "") -> str:
    """Why a real `what` would be refused before any rule is tried, as far as its token says; or "".

    `name`, when given, is what the token's globs must allow (a tool's or prompt's exposed name).
    """
    if token.revoked:
        return f"The token {token.name} is revoked: the {what} would be refused before any rule is tried."
    if name is not None and not token_allows(token, name):
        return f"The token {token.name} may not use {name}: {unreachable}."
    return ""


def unavailable(item: Tool | Prompt, unreachable: str, unreviewed: str) -> str:
    """Why a catalog item the token may use would still not reach the policy; or ""."""
    if not item.server.enabled:
        return f"The server {item.server.name} is disabled: {unreachable}."
    if not item.served:
        return f"{item.exposed_name} awaits review or was rejected: {unreviewed}."
    return ""


def try_call(token: ClientToken, tool: Tool, arguments: dict) -> Outcome:
    unreachable = "the client would not find the tool"
    stopped = refused_at_the_door(token, "call", tool.exposed_name, unreachable) or unavailable(
        tool, unreachable, "the call would be refused, not decided"
    )
    errors = validate(tool.definition.get("inputSchema") or {}, arguments)
    return outcome(engine.TOOL, lifecycle.call_facts(token, tool, arguments), stopped, errors)


def try_permission(token: ClientToken, tool_name: str, tool_input: dict) -> Outcome:
    """A coding agent's permission request for its tool `tool_name`, tried as try_call tries a call."""
    stopped = refused_at_the_door(token, "request", permission_prompt.NAME, "the agent could not ask")
    return outcome(engine.PERMISSION, permissions.facts(token, tool_name, tool_input), stopped, [])


def try_read(token: ClientToken, uri: str) -> Outcome:
    """A resources/read of `uri`, routed as the gateway routes it: a listed resource, else the template matching it.

    The URI is normalized first and the route looked up with the token's globs, as the gateway does, so a URI the
    token may not read has none.
    """
    try:
        uri, too_long = routes.requested_uri(uri), ""
    except JsonRpcError as exc:
        too_long = f"{exc.message}: the client would be refused."
    route = None if too_long else routes.resource_route(token, uri)
    stopped = too_long or refused_at_the_door(token, "read")
    if not stopped and route is None:
        stopped = (
            f"No resource or template that the token {token.name} may read has the URI {uri}:"
            " the client would be told it is not found."
        )
    read = reads.Read(Call.Kind.RESOURCE, route.server if route else None, uri, {"uri": uri}, "")
    return outcome(engine.RESOURCE, reads.facts(token, read), stopped, [])


def try_prompt(token: ClientToken, prompt: Prompt, arguments: dict) -> Outcome:
    """A prompts/get of `prompt` with `arguments`, checked against its declared arguments as the gateway checks them."""
    unreachable = "the client would be told the prompt is unknown"
    stopped = refused_at_the_door(token, "prompt get", prompt.exposed_name, unreachable) or unavailable(
        prompt, unreachable, unreachable
    )
    try:
        routes.prompt_arguments(prompt, arguments)
        errors = []
    except JsonRpcError as exc:
        errors = [exc.message]
    read = reads.Read(Call.Kind.PROMPT, prompt.server, prompt.exposed_name, arguments, "")
    return outcome(engine.PROMPT, reads.facts(token, read), stopped, errors)


def outcome(kind: str, facts: engine.CallFacts, stopped: str, errors: list) -> Outcome:
    verdict = engine.evaluate(lifecycle.policy_rules(), facts)
    listed = {rule.pk: rule for rule in PolicyRule.objects.select_related("server", "client")}
    tried = {trial.rule.id for trial in verdict.trials}
    hold = None
    if verdict.action == engine.ASK:
        hold = Hold(*hold_terms.hold_terms(verdict.rule, list(listed.values())))
    return Outcome(
        kind=kind,
        verdict=verdict,
        tried=[Tried(listed[trial.rule.id], trial) for trial in verdict.trials if trial.rule.id in listed],
        untried=[rule for rule in listed.values() if rule.enabled and rule.pk not in tried],
        disabled=sum(not rule.enabled for rule in listed.values()),
        stopped=stopped,
        argument_errors=errors,
        hold=hold,
    )
