"""Reviewing definitions: a changed or new tool, resource, template or prompt waits for an admin's acceptance.

A tool waiting for review reaches no client; a resource, template or prompt whose
change waits is served as it was last accepted, and a new one is not served at all.

Each function changes data, writes its audit event in the same transaction and
announces the change after commit. An admin decides on the definition shown:
a decision names its digest, and one that no longer matches is refused.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from approvals import roles
from approvals.audit.chain import Actor
from approvals.catalog import change_detection, trust
from approvals.catalog.models import Server, Tool
from approvals.catalog.surface_models import Prompt
from approvals.catalog.surface_sync import KINDS
from approvals.live import events
from approvals.protocol.hidden_text import Mentions, hidden_content, model_text
from approvals.protocol.tool_review import definition_changes

DECIDABLE = [Tool.Status.NEEDS_REVIEW, Tool.Status.DECLINED]


# The list each kind of entry is in, which clients are told changed when a decision changes what they see.
LISTS = {Tool: "tools", **{kind.model: "prompts" if kind.model is Prompt else "resources" for kind in KINDS}}


@dataclass
class Outcome:
    done: bool
    item: object
    message: str


@dataclass
class Review:
    """What an admin reads before deciding: the changed fields, what hides text, and the text a model would read."""

    item: object  # a Tool or a SurfaceItem
    is_new: bool
    changes: list
    hidden: list
    model_text: str


def may_review(user) -> bool:
    return roles.is_admin(user)


def needs_review(server: Server | None = None):
    tools = Tool.objects.select_related("server").filter(status=Tool.Status.NEEDS_REVIEW)
    return tools.filter(server=server) if server is not None else tools


def surface_needing_review(server: Server | None = None) -> list:
    """The resources, templates and prompts awaiting review, kind by kind."""
    rows = []
    for kind in KINDS:
        found = kind.model.objects.select_related("server").filter(status=Tool.Status.NEEDS_REVIEW)
        rows += found.filter(server=server) if server is not None else found
    return rows


def surface_declined() -> list:
    return [row for kind in KINDS for row in kind.model.objects.select_related("server").filter(status="declined")]


def review_count() -> int:
    models = [Tool, *(kind.model for kind in KINDS)]
    return sum(model.objects.filter(status=Tool.Status.NEEDS_REVIEW).count() for model in models)


def other_tool_names(server_id) -> list[str]:
    """The names other servers' tools go by: a definition that mentions one may be steering the model to it."""
    return list(
        Tool.objects.filter(status__in=Tool.HELD).exclude(server_id=server_id).values_list("exposed_name", flat=True)
    )


def review_of(item, others: list[str] | Mentions | None = None) -> Review:
    """The review of a tool or of a resource, template or prompt: what is listed now against what was accepted."""
    others = other_tool_names(item.server_id) if others is None else others
    return Review(
        item=item,
        is_new=item.reviewed_definition is None,
        changes=definition_changes(item.reviewed_definition, item.definition),
        hidden=hidden_content(item.definition, others),
        # As clients would be given it once accepted (a served entry's listing shows the accepted one until then).
        model_text=model_text({**item.definition, "name": trust.listed_name(item)}),
    )


def accept(item_id, actor: Actor, note: str = "", shown_digest: str | None = None, model=Tool) -> Outcome:
    """The listed definition becomes the reviewed one, and the entry is served as it."""
    return decide(model, item_id, actor, note, shown_digest, Tool.Status.ACTIVE)


def reject(item_id, actor: Actor, note: str = "", shown_digest: str | None = None, model=Tool) -> Outcome:
    """The entry stays out of every list until its definition changes again or an admin accepts it."""
    return decide(model, item_id, actor, note, shown_digest, Tool.Status.DECLINED)


@transaction.atomic
def decide(model, item_id, actor, note, shown_digest, status) -> Outcome:
    item = model.objects.select_for_update().select_related("server").get(pk=item_id)
    verb = "accepted" if status == Tool.Status.ACTIVE else "rejected"
    name = trust.label_of(item)
    if item.status not in DECIDABLE or item.status == status:
        return Outcome(False, item, f"{name} was not {verb}: it is {item.get_status_display().lower()}.")
    if shown_digest is not None and shown_digest != item.digest:
        return Outcome(False, item, f"{name} changed again since it was shown; read it again before deciding.")
    reviewed = item.reviewed_digest
    now = timezone.now()
    item.status, item.last_changed_at = status, now
    if status == Tool.Status.ACTIVE:
        # A rename is accepted with the rest: from now on clients, and tokens' globs, know it by its listed name.
        item.reviewed_digest, item.reviewed_definition = item.digest, item.definition
        item.exposed_name = trust.listed_name(item)
    item.save(update_fields=["status", "last_changed_at", "reviewed_digest", "reviewed_definition", "exposed_name"])
    kind = trust.Kind.ACCEPTED if status == Tool.Status.ACTIVE else trust.Kind.DECLINED
    change_detection.record_change(item, kind, item.definition, item.digest, status, note, now, reviewed, actor.name)
    trust.record_decision(verb, actor, item, reviewed, note)
    events.catalog_changed(item.server_id, lists=(LISTS[model],))
    return Outcome(True, item, f"{verb} {name} (digest {item.digest[:12]})")
