"""How a sync finds what changed in a server's listing, for tools, resources, templates and prompts alike.

Each listed entry is compared with its row (its digest and status): added, changed, rejected, restored or,
no longer listed, removed; every change of definition or status is one history row (ToolChange for a tool,
SurfaceChange for the others), and the labels changed are gathered for the sync's event and webhook.
Whether a changed definition is served at once or waits for review is catalog.trust's.
"""

from approvals.catalog.trust import Kind, Status, accept_unread, label_of


def apply_entry(server, model, row, listed: dict, kept: dict, now, changes) -> None:
    """Create or update one entry as the server listed it, with its history row; `changes` gathers labels by word.

    `listed` holds definition, digest, status and reason, changed together with a history row;
    `kept` the fields that follow the listing whatever it says (its name, its warnings).
    """
    definition, digest, status, reason = (listed[k] for k in ("definition", "digest", "status", "reason"))
    if row is None:
        row = model.objects.create(
            server=server, first_seen_at=now, last_changed_at=now, last_seen_at=now, **listed, **kept
        )
        kind = Kind.REJECTED if status == Status.REJECTED else Kind.ADDED
        record_change(row, kind, definition, digest, status, reason, now)
        changes["rejected" if kind == Kind.REJECTED else "added"].append(label_of(row))
    else:
        kind, previous = change_kind(row, digest, status), row.digest
        for name, value in {**kept, "last_seen_at": now, **(listed if kind else {})}.items():
            setattr(row, name, value)
        if kind:
            row.last_changed_at = now
        row.save()
        if kind:
            record_change(row, kind, definition, digest, status, reason, now, previous_digest=previous)
            changes[{Kind.REJECTED: "rejected", Kind.RESTORED: "added"}.get(kind, "changed")].append(label_of(row))
    if kind and status == Status.NEEDS_REVIEW:
        changes["review"].append(label_of(row))
    accept_unread(server, row)


def remove_entry(item, now, changes) -> None:
    reason = "no longer listed"
    record_change(item, Kind.REMOVED, item.definition, item.digest, Status.REMOVED, reason, now)
    item.status, item.reason, item.last_changed_at = Status.REMOVED, reason, now
    item.save(update_fields=["status", "reason", "last_changed_at"])
    changes["removed"].append(label_of(item))


def change_kind(item, digest, status):
    if status == Status.REJECTED and item.status != Status.REJECTED:
        return Kind.REJECTED
    if digest != item.digest:
        return Kind.CHANGED
    if status != item.status:
        return Kind.RESTORED
    return None


def record_change(item, kind, definition, digest, status, reason, now, previous_digest="", actor_name=""):
    item.changes.create(
        kind=kind,
        definition=definition,
        digest=digest,
        previous_digest=previous_digest,
        status=status,
        reason=reason,
        actor_name=actor_name,
        at=now,
    )
