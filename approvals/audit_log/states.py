"""The policy rules and the servers as they stood after a given event, rebuilt from the audit log.

Rebuilt backwards: from the rows as they are now, every rule and server event after that
event is undone, newest first, with the values before that each one recorded. So a
pruned log still tells the state of any moment it keeps. A server deleted since was
deleted through admin, whose event names it only: its values are rebuilt forwards from
its own events up to that moment. The rules keep their order; a server's credentials
appear only by the names the log keeps of them.
"""

from approvals.actions.servers import AUDITED_FIELDS
from approvals.audit.models import AuditEvent
from approvals.audit.snapshots import snapshot
from approvals.catalog.models import Server
from approvals.policy.models import PolicyRule
from approvals.policy.rules import serialize

RULE_ACTIONS = ("rule.created", "rule.changed", "rule.moved", "rule.deleted", "rule.imported")
SERVER_ACTIONS = ("server.added", "server.changed")
ADMIN_ACTIONS = ("admin.added", "admin.changed", "admin.deleted")
SERVER_MODEL = "approvals.server"


class Rules:
    """The rules in their order, each as the log serializes it."""

    def __init__(self, rules: list[dict]):
        self.ordered = list(rules)

    def remove(self, rule):
        self.ordered = [each for each in self.ordered if each["id"] != rule["id"]]

    def put(self, rule):
        self.remove(rule)
        self.ordered.insert(max(0, rule["position"] - 1), dict(rule))

    def undo(self, action, data):
        changes = data.get("changes", []) if action == "rule.imported" else [data]
        for change in reversed(changes):
            before, after = change.get("before"), change.get("after")
            if before is None:
                self.remove(after)
            else:
                self.put(before)

    def shown(self) -> list[dict]:
        return [{**rule, "position": position} for position, rule in enumerate(self.ordered, 1)]


class Servers:
    """Each server by id, with the fields the log records of it."""

    def __init__(self, servers: dict):
        self.by_id = servers

    def undo(self, event):
        data = event.data if isinstance(event.data, dict) else {}
        if event.action.startswith("admin."):
            if data.get("model") != SERVER_MODEL or not str(data.get("object_id", "")).isdigit():
                return
            pk = int(data["object_id"])
            if event.action == "admin.deleted":
                self.by_id[pk] = rebuilt_forwards(pk, event.seq - 1)
                return
        else:
            pk = event.server_id
        if event.action in ("server.added", "admin.added"):
            self.by_id.pop(pk, None)
        elif pk in self.by_id:
            self.by_id[pk].update({name: value for name, value in data.get("before", {}).items() if name != "id"})

    def shown(self) -> list[dict]:
        return [{"id": pk, **fields} for pk, fields in sorted(self.by_id.items())]


def rebuilt_forwards(pk: int, through_seq: int) -> dict:
    """A server as its own events up to `through_seq` describe it: added, then each change's values after."""
    fields = {}
    for event in server_events().filter(seq__lte=through_seq).order_by("seq"):
        data = event.data if isinstance(event.data, dict) else {}
        if event.action.startswith("admin.") and str(data.get("object_id")) != str(pk):
            continue
        if not event.action.startswith("admin.") and event.server_id != pk:
            continue
        if event.action == "server.added":
            fields = {name: data.get(name) for name in AUDITED_FIELDS}
        elif event.action in ("server.changed", "admin.added", "admin.changed"):
            fields.update(data.get("after", {}))
    return fields


def server_events():
    return AuditEvent.objects.filter(action__in=SERVER_ACTIONS) | AuditEvent.objects.filter(
        action__in=ADMIN_ACTIONS, data__model=SERVER_MODEL
    )


def states_after(*seqs: int) -> dict[int, dict]:
    """For each seq, {"rules": [...], "servers": [...]} as they stood just after that event."""
    ordered = PolicyRule.objects.select_related("server", "client").order_by("position")
    rules = Rules(serialize(rule) for rule in ordered)
    servers = Servers({server.pk: snapshot(server, AUDITED_FIELDS) for server in Server.objects.all()})
    wanted = sorted(set(seqs), reverse=True)
    found = {}
    later = (server_events() | AuditEvent.objects.filter(action__in=RULE_ACTIONS)).filter(seq__gt=wanted[-1])
    for event in later.order_by("-seq").iterator():
        while wanted and event.seq <= wanted[0]:
            found[wanted.pop(0)] = {"rules": rules.shown(), "servers": servers.shown()}
        if event.action in RULE_ACTIONS:
            rules.undo(event.action, event.data if isinstance(event.data, dict) else {})
        else:
            servers.undo(event)
    for seq in wanted:
        found[seq] = {"rules": rules.shown(), "servers": servers.shown()}
    return found
