"""A held call as a rule of a chosen scope: this tool, this tool with some of these argument values, or any tool
of this server with these annotations; and which recent calls such a rule would have matched."""

from approvals.calls.models import Call
from approvals.display.like_this import conditions, subject
from approvals.display.policy import facts_of
from approvals.policy import engine, rules
from approvals.policy.kinds import CallKind
from approvals.protocol.tools import annotations

TOOL, VALUES, ANNOTATIONS = "tool", "values", "annotations"
# The recent calls a preview tries the rule on, and the most it lists.
PREVIEWED, MAX_PREVIEW = 200, 20


def scope_choices(call: Call) -> list[tuple[str, str]]:
    choices = [(TOOL, f"This tool: every call to {subject(call)}")]
    if call.kind != CallKind.RESOURCE and conditions(call.arguments):
        choices.append((VALUES, "This tool with the argument values ticked below"))
    if call_annotations(call):
        server = call.server.name
        choices.append((ANNOTATIONS, f"Any tool of {server} with the annotations {annotation_words(call)}"))
    return choices


def call_annotations(call: Call) -> dict:
    """The annotations a rule may name for this call: a trusted server's tool only (elsewhere they never match)."""
    if call.kind != CallKind.TOOL or call.tool is None or call.server is None or not call.server.trusted:
        return {}
    return annotations(call.tool.definition)


def annotation_words(call: Call) -> str:
    return ", ".join(f"{key}={str(value).lower()}" for key, value in call_annotations(call).items())


def rule_request(call: Call, scope: str, action: str, kept: list[str]) -> rules.RuleRequest:
    """The rule of `scope` that would `action` this call; `kept` are the paths of the argument values kept."""
    server = call.server.name if call.server is not None else None
    if scope == ANNOTATIONS:
        return rules.RuleRequest(
            action,
            server=server,
            annotations=call_annotations(call),
            name=f"{action} {server} tools with {annotation_words(call)}"[:100],
        )
    chosen = [c for c in conditions(call.arguments) if c["path"] in kept] if scope == VALUES else []
    return rules.RuleRequest(
        action,
        server=server,
        tool_glob=subject(call)[:200],
        applies_to=call.kind,
        conditions=chosen,
        name=f"{action} {subject(call)}{' with these values' if chosen else ''}"[:100],
    )


def preview(request: rules.RuleRequest, server_id: int | None) -> list[Call]:
    """The recent calls (newest first) the rule would have matched, were it the only rule."""
    rule = engine.Rule(
        None,
        request.name,
        request.action,
        request.tool_glob,
        server_id,
        None,
        request.annotations or {},
        request.conditions or [],
        applies_to=request.applies_to,
    )
    recent = Call.objects.select_related("tool", "server", "token").order_by("-id")[:PREVIEWED]
    return [call for call in recent if engine.attempt(rule, facts_of(call)).matched][:MAX_PREVIEW]
