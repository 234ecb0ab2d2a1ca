"""Reviewing tool definitions: a changed or new tool reaches no client until an admin accepts it.

Each function changes data, writes its audit event in the same transaction and
announces the change after commit. An admin decides on the definition shown:
a decision names its digest, and one that no longer matches is refused.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from approvals import roles
from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.gateway.listing import exposed_definition
from approvals.live import events
from approvals.models import Server, Tool, ToolChange
from approvals.protocol.tool_review import definition_changes, hidden_content, model_text

DECIDABLE = [Tool.Status.NEEDS_REVIEW, Tool.Status.DECLINED]


@dataclass
class Outcome:
    done: bool
    tool: Tool
    message: str


@dataclass
class Review:
    """What an admin reads before deciding: the changed fields, what hides text, and the text a model would read."""

    tool: Tool
    is_new: bool
    changes: list
    hidden: list
    model_text: str


def may_review(user) -> bool:
    return roles.is_admin(user)


def needs_review(server: Server | None = None):
    tools = Tool.objects.select_related("server").filter(status=Tool.Status.NEEDS_REVIEW)
    return tools.filter(server=server) if server is not None else tools


def review_count() -> int:
    return Tool.objects.filter(status=Tool.Status.NEEDS_REVIEW).count()


def other_tool_names(server_id) -> list[str]:
    """The names other servers' tools go by: a definition that mentions one may be steering the model to it."""
    return list(
        Tool.objects.filter(status__in=Tool.HELD).exclude(server_id=server_id).values_list("exposed_name", flat=True)
    )


def review_of(tool: Tool, others: list[str] | None = None) -> Review:
    others = other_tool_names(tool.server_id) if others is None else others
    return Review(
        tool=tool,
        is_new=tool.reviewed_definition is None,
        changes=definition_changes(tool.reviewed_definition, tool.definition),
        hidden=hidden_content(tool.definition, others),
        model_text=model_text(exposed_definition(tool)),
    )


def accept(tool_id, actor: Actor, note: str = "", shown_digest: str | None = None) -> Outcome:
    """The listed definition becomes the reviewed one and the tool active again."""
    return decide(tool_id, actor, note, shown_digest, Tool.Status.ACTIVE)


def reject(tool_id, actor: Actor, note: str = "", shown_digest: str | None = None) -> Outcome:
    """The tool stays out of every list until its definition changes again or an admin accepts it."""
    return decide(tool_id, actor, note, shown_digest, Tool.Status.DECLINED)


@transaction.atomic
def decide(tool_id, actor, note, shown_digest, status) -> Outcome:
    tool = Tool.objects.select_for_update().select_related("server").get(pk=tool_id)
    verb = "accepted" if status == Tool.Status.ACTIVE else "rejected"
    if tool.status not in DECIDABLE or tool.status == status:
        return Outcome(False, tool, f"{tool.exposed_name} was not {verb}: it is {tool.get_status_display().lower()}.")
    if shown_digest is not None and shown_digest != tool.digest:
        return Outcome(
            False, tool, f"{tool.exposed_name} changed again since it was shown; read it again before deciding."
        )
    reviewed = tool.reviewed_digest
    now = timezone.now()
    tool.status, tool.last_changed_at = status, now
    if status == Tool.Status.ACTIVE:
        tool.reviewed_digest, tool.reviewed_definition = tool.digest, tool.definition
    tool.save(update_fields=["status", "last_changed_at", "reviewed_digest", "reviewed_definition"])
    kind = ToolChange.Kind.ACCEPTED if status == Tool.Status.ACTIVE else ToolChange.Kind.DECLINED
    ToolChange.objects.create(
        tool=tool,
        kind=kind,
        definition=tool.definition,
        digest=tool.digest,
        previous_digest=reviewed,
        status=status,
        reason=note,
        actor_name=actor.name,
        at=now,
    )
    chain.record(
        f"tool.{verb}",
        actor,
        server=tool.server,
        tool=tool,
        data={"tool": tool.exposed_name, "digest": tool.digest, "reviewed_digest": reviewed, "note": note},
    )
    events.catalog_changed(tool.server_id, lists=("tools",))
    return Outcome(True, tool, f"{verb} {tool.exposed_name} (digest {tool.digest[:12]})")
