"""Which enabled server answers a resources/read, a prompts/get or a completion/complete, for one token.

A token reaches a resource, template or prompt when its globs allow the row's
exposed name, as with tools; a row it may not use does not exist for it.
"""

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.catalog.models import Prompt, Resource, ResourceTemplate, Server, SurfaceItem
from approvals.catalog.surface import KINDS, RESOURCES, offers
from approvals.protocol.uri_templates import matches
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken


def allowed(token: ClientToken, rows):
    return [row for row in rows if token_allows(token, row.exposed_name)]


def enabled(model):
    return model.objects.select_related("server").filter(SurfaceItem.SERVED, server__enabled=True)


def resource_route(token: ClientToken, uri: str) -> Resource | ResourceTemplate | None:
    """The listed resource with this URI, else the first template (in template order) that matches it."""
    listed = allowed(token, enabled(Resource).filter(uri=uri))
    if listed:
        return listed[0]
    return next((t for t in allowed(token, enabled(ResourceTemplate)) if matches(t.uri, uri)), None)


def prompt_route(token: ClientToken, name: str) -> Prompt | None:
    found = allowed(token, enabled(Prompt).filter(exposed_name=name))
    return found[0] if found else None


def completion_route(token: ClientToken, ref_uri: str) -> ResourceTemplate | Resource | None:
    """A completion names a resource template by its template (or a resource by its URI), as the server listed it."""
    found = allowed(token, enabled(ResourceTemplate).filter(uri=ref_uri)) or allowed(
        token, enabled(Resource).filter(uri=ref_uri)
    )
    return found[0] if found else None


def offered_kinds() -> set[str]:
    """The capabilities (resources, prompts, completions) that some enabled server offers, and "subscribe"."""
    kinds = set()
    for capabilities in Server.objects.filter(enabled=True).values_list("capabilities", flat=True):
        if not isinstance(capabilities, dict):
            continue
        kinds |= {kind.capability for kind in KINDS if offers(capabilities, kind)}
        if isinstance(capabilities.get("completions"), dict):
            kinds.add("completions")
        if offers(capabilities, RESOURCES) and capabilities["resources"].get("subscribe") is True:
            kinds.add("subscribe")
    return kinds


def record_use(action: str, token: ClientToken, server: Server | None, data: dict) -> None:
    """One audit event for one read, prompt or completion, whatever came of it."""
    chain.record(action, Actor.client(token), token=token, server=server, data=data)
