"""Every action the audit log may record, each with what it means: the one list record() checks against.

The audit page's action filter and the report list them from here, so an action recorded anywhere is one a
reader can select. Adding an action is adding its line below; chain.record refuses one that is missing.
"""

ACTIONS: dict[str, str] = {
    # A client's tool call, from its arrival to its end.
    "call.received": "a client sent a tool call",
    "call.rejected": "a tool call's arguments failed the tool's input schema",
    "call.refused": "a tool call was refused before it was held (unknown, unreviewed or out of scope)",
    "call.policy": "the policy decided what becomes of a call (allow, deny or ask) and by which rule",
    "call.pending": "a call is held for an operator's approval",
    "call.claimed": "an operator took a held call",
    "call.released": "an operator (or an admin) gave a held call back",
    "call.escalated": "a held call close to its expiry was escalated",
    "call.edited": "an operator changed a held call's arguments before approving it",
    "call.approval": "an operator approved a call that needs more approvals yet",
    "call.approved": "an operator approved a held call",
    "call.denied": "an operator or a rule denied a call",
    "call.expired": "a held call expired undecided",
    "call.cancelled": "a call was cancelled (its client left, its token or server went)",
    "call.forwarded": "an approved or allowed call was sent to its upstream server",
    "call.completed": "the upstream server answered a call",
    "call.failed": "a forwarded call ended in an error",
    "call.task_created": "a client follows a held call as an MCP task (its id and time to live)",
    "call.upstream_task": "the upstream server's task that runs a call changed status",
    # Requests for a person's input (elicitation) made during a call.
    "input.requested": "an upstream server asked for input during a call",
    "input.passed_through": "a request for input went to the client itself",
    "input.answered": "an operator answered a request for input",
    "input.declined": "a request for input was declined",
    "input.cancelled": "a request for input was cancelled",
    "input.expired": "a request for input expired unanswered",
    "input.refused": "a request for input was refused as malformed",
    # What clients read through the gateway.
    "tools.listed": "a client listed its tools",
    "resources.listed": "a client listed its resources",
    "templates.listed": "a client listed its resource templates",
    "prompts.listed": "a client listed its prompts",
    "resource.read": "a client read a resource",
    "resource.subscribed": "a client subscribed to a resource's updates",
    "resource.unsubscribed": "a client ended a subscription to a resource",
    "prompt.got": "a client got a prompt",
    "completion.asked": "a client asked for completions of an argument",
    # The catalog of upstream definitions and its review.
    "catalog.changed": "a server's tools, resources, templates or prompts changed",
    "tool.accepted": "a tool's definition was accepted in review",
    "tool.rejected": "a tool's definition was rejected in review",
    "resource.accepted": "a resource's definition was accepted in review",
    "resource.rejected": "a resource's definition was rejected in review",
    "template.accepted": "a resource template's definition was accepted in review",
    "template.rejected": "a resource template's definition was rejected in review",
    "prompt.accepted": "a prompt's definition was accepted in review",
    "prompt.rejected": "a prompt's definition was rejected in review",
    # Upstream servers and the console's authorization toward them.
    "server.added": "an admin added an upstream server",
    "server.changed": "an admin changed an upstream server",
    "server.trusted": "an admin marked a server trusted",
    "server.untrusted": "an admin marked a server untrusted",
    "server.oauth_client_changed": "an admin changed a server's OAuth client",
    "server.needs_authorization": "a server's upstream authorization lapsed and needs a person",
    "upstream_oauth.discovered": "a server's authorization server was discovered",
    "upstream_oauth.registered": "the console registered as a client at a server's authorization server",
    "upstream_oauth.authorized": "a person authorized the console toward a server",
    "upstream_oauth.authorization_failed": "authorizing the console toward a server failed",
    "upstream_oauth.refreshed": "the console's token toward a server was refreshed",
    "upstream_oauth.refresh_refused": "a server's authorization server refused a refresh",
    "upstream_oauth.client_credentials": "the console took a token toward a server with its client credentials",
    "upstream_oauth.disconnected": "a person ended their own authorization toward a server",
    # Clients' credentials.
    "token.created": "a client token was created",
    "token.changed": "a client token was changed",
    "token.rotated": "a client token's secret was replaced",
    "token.revoked": "a client token was revoked",
    "oauth.granted": "a person granted a client access through OAuth",
    "oauth.denied": "a person denied a client's OAuth request",
    "oauth.refreshed": "a client's OAuth grant was refreshed",
    "api_key.created": "an API key was created",
    "api_key.revoked": "an API key was revoked",
    # Devices that take notifications of waiting calls (Web Push).
    "push.device_added": "a person turned notifications on for a device",
    "push.device_removed": "a person removed one of their notification devices",
    "push.device_forgotten": "a push service said a device is gone (404 or 410), and it was forgotten",
    # The policy.
    "rule.created": "a policy rule was created",
    "rule.changed": "a policy rule was changed",
    "rule.moved": "a policy rule changed place",
    "rule.deleted": "a policy rule was deleted",
    "rule.imported": "a rule file was imported",
    # People signing in, and admins.
    "user.login": "a person signed in",
    "user.login_failed": "a sign-in failed",
    "user.login_refused": "single sign-on refused a person",
    "user.login_locked": "repeated failures locked sign-in for a name or an address",
    "user.access_ended": "a person's access ended: deactivated, no role left, or refused by the identity provider",
    "user.roles_changed": "single sign-on changed a person's roles",
    "person.created": "an admin created a person on the People page, with roles",
    "person.roles_changed": "an admin changed a person's roles on the People page",
    "person.deactivated": "an admin deactivated a person on the People page, ending their access",
    "person.reactivated": "an admin reactivated a person on the People page",
    "admin.added": "an admin added a row in Django's admin",
    "admin.changed": "an admin changed a row in Django's admin",
    "admin.deleted": "an admin deleted a row in Django's admin",
    # The audit log itself, and webhooks.
    "retention.changed": "an admin changed how long audit events are kept",
    "audit.pruned": "audit events past their retention were deleted, the new first one anchored",
    "audit.witness_reset": "an admin reset the audit log's witness",
    "webhook.created": "a webhook endpoint was created",
    "webhook.changed": "a webhook endpoint was changed",
    "webhook.rotated": "a webhook endpoint's signing secret was replaced",
    "webhook.deleted": "a webhook endpoint was deleted",
    "webhook.redelivered": "a webhook delivery was sent again",
    "webhook.tested": "a test event was sent to a webhook endpoint",
    # Slack approvals (approvals/slack); a decision taken in Slack is call.approved or call.denied, via slack.
    "slack.linked": "a Slack user was linked to a console person, who decides as that person in Slack",
    "slack.unlinked": "a person removed the link of a Slack user to them",
    "slack.refused": "a signed click in Slack decided nothing: its Slack user is not linked, or may not decide",
}


class UnregisteredAction(ValueError):
    """An action missing from ACTIONS: recording it would hide it from the audit page's filter."""


def registered(action: str) -> str:
    if action not in ACTIONS:
        raise UnregisteredAction(
            f"audit action {action!r} is not registered: add it, with a one-line description,"
            " to ACTIONS in approvals/audit/actions.py"
        )
    return action
