"""Rows whose every shown value is as long as a person or an upstream server may make it: 2,000-character texts
with and without spaces, names as long as their fields allow (200 characters at most), made through the same
functions the console uses, so the audit log holds the long values too."""

from datetime import timedelta

from django.utils import timezone

from approvals import roles
from approvals.actions import revocation, servers
from approvals.api.keys import create_key
from approvals.audit.models import AuditEvent
from approvals.calls import deciding, ending, lifecycle
from approvals.calls.models import Call
from approvals.catalog.models import Server, Tool
from approvals.catalog.surface_models import Prompt, Resource
from approvals.inputs import requests
from approvals.inputs.models import InputRequest
from approvals.policy import rules
from approvals.protocol import revisions
from approvals.protocol.tools import tool_digest
from approvals.push import devices
from approvals.tokens.context import ClientContext
from approvals.tokens.credentials import create_token
from approvals.webhooks.endpoints import create_endpoint
from tests.fixtures.catalog import make_tool
from tests.fixtures.people import make_user
from tests.push.service import Browser

WORDS = ("Refund the order of the customer whose address is below, then tell them by email. " * 30)[:2000]
UNBROKEN = ("https://records.example/customers/" + "a1b2c3d4e5" * 200)[:2000]
# The people the demo seeds (seed_demo), and an admin holding that role alone.
PEOPLE = {
    "operator": [roles.OPERATOR],
    "auditor": [roles.AUDITOR],
    "admin-only": [roles.ADMIN],
    "admin": [roles.ADMIN, roles.OPERATOR, roles.AUDITOR],
}


def name(field_length: int, stem: str, unbroken: bool = False) -> str:
    """A name filling its field, up to 200 characters; unbroken, with no space or hyphen to wrap at."""
    length = min(field_length, 200)
    filler = "x" * length if unbroken else ("long words " * 20)
    return (stem + ("_" if unbroken else " ") + filler)[:length].strip()


def long_values() -> dict:
    return {"note": WORDS, "link": UNBROKEN, "items": [UNBROKEN[:300], WORDS[:300]], "nested": {"deeper": WORDS}}


def make_people():
    for username, role_names in PEOPLE.items():
        make_user(username, *role_names, superuser=username == "admin", is_staff=username == "admin")


def make_catalog():
    server = servers.add_server(
        name=name(100, "Customer records", unbroken=True),
        transport=Server.Transport.HTTP,
        url=UNBROKEN,
        tool_prefix="records_",
        schedule_sync=False,
    )
    schema = {
        "type": "object",
        "properties": {
            name(60, "customer_identifier", unbroken=True): {"type": "string", "description": WORDS, "title": WORDS},
            "note": {"type": "string", "description": UNBROKEN},
            "tone": {"type": "string", "enum": [UNBROKEN[:500], WORDS[:500]]},
        },
    }
    tool = make_tool(
        server, name(128, "lookup", unbroken=True), title=WORDS[:200], description=WORDS + UNBROKEN, inputSchema=schema
    )
    for status in (Tool.Status.NEEDS_REVIEW, Tool.Status.DECLINED):
        make_tool(server, name(128, f"changed_{status}", unbroken=True), status=status, description=UNBROKEN)
    entries = []
    for kind, model, extra in (("resources", Resource, {"uri": UNBROKEN}), ("prompts", Prompt, {})):
        definition = {"name": name(200, "entry", unbroken=True), "description": WORDS, **extra}
        entry = model.objects.create(
            server=server,
            upstream_name=definition["name"],
            exposed_name="records_" + definition["name"],
            definition=definition,
            digest=tool_digest(definition),
            status=Tool.Status.NEEDS_REVIEW,
            **extra,
        )
        entries.append((kind, entry))
    return server, tool, entries


def make_calls(tool, token, operator) -> dict:
    ctx = ClientContext(token, revisions.MODERN, "2026-07-28")

    def received():
        call, _ = lifecycle.receive_call(ctx, tool, long_values(), 1, None)
        return call

    pending = received()
    denied = received()
    deciding.decide(denied.pk, operator, approve=False, reason=WORDS + UNBROKEN)
    for status, error in ((Call.Status.COMPLETED, ""), (Call.Status.FAILED, UNBROKEN)):
        call = received()
        deciding.decide(call.pk, operator, approve=True, reason=UNBROKEN)
        ending.mark_forwarded(call)
        result = {"content": [{"type": "text", "text": WORDS}, {"type": "text", "text": UNBROKEN}]}
        ending.record_result(call, status, result | {"structuredContent": long_values()}, error)
    asking = received()
    why = {"why": {"type": "string", "title": WORDS[:200], "description": UNBROKEN}}
    params = {"message": WORDS + UNBROKEN, "requestedSchema": {"type": "object", "properties": why}}
    asked = requests.open_request(asking, "elicitation/create", params, InputRequest.Route.OPERATOR)
    return {"pending": pending, "finished": call, "input": asked}


def make_long_rows() -> dict:
    """Every kind of row a page lists or shows, with long values; what the detail pages need, by kind."""
    make_people()
    admin = make_user(name(150, "administrator", unbroken=True), roles.ADMIN, roles.OPERATOR, roles.AUDITOR)
    server, tool, entries = make_catalog()
    token, _ = create_token(
        name(100, "support-bot", unbroken=True),
        tool_globs=[UNBROKEN[:200]],
        owner=admin,
        description=WORDS[:500],
        expires_at=timezone.now() + timedelta(days=30),
    )
    revoked, _ = create_token(name(100, "retired bot"), description=UNBROKEN[:500])
    revocation.revoke_token(revoked, admin)
    condition = {"path": name(200, "customer.addresses.0", unbroken=True), "op": "in", "value": [UNBROKEN, WORDS]}
    glob = name(200, "records_*", unbroken=True)
    asking = rules.RuleRequest("ask", tool_glob=glob, name=name(100, "refunds"), message=WORDS, conditions=[condition])
    rule = rules.create_rule(asking)
    unnamed = name(100, "nothing", unbroken=True)
    rules.create_rule(rules.RuleRequest("deny", tool_glob="nothing_*", name=unnamed, message=UNBROKEN))
    hook = {"url": UNBROKEN, "events": ["call.pending"], "console_url": "http://127.0.0.1/", "description": WORDS[:200]}
    webhook, _ = create_endpoint(hook, admin)
    create_key(admin, name(100, "key", unbroken=True))
    calls = make_calls(tool, token, admin)
    # After the calls: a device turned on before them would be sent a notification of each, looking push.example up.
    push_endpoint = "https://push.example/" + UNBROKEN[:1900]
    devices.turn_on(admin, Browser(push_endpoint).subscription, name(100, "phone", unbroken=True), UNBROKEN[:300])
    # One event of each kind whose data holds long values.
    events = [
        AuditEvent.objects.filter(action=action).latest("seq").seq
        for action in ("server.added", "rule.created", "token.created", "webhook.created", "call.denied", "call.failed")
    ]
    return {
        "server": server,
        "tool": tool,
        "entries": entries,
        "token": token,
        "rule": rule,
        "webhook": webhook,
        "events": events,
        **calls,
    }
