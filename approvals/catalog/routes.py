"""Which enabled server answers a resources/read, a prompts/get or a completion/complete, for one token,
and which tools its globs reach.

A token reaches a resource, template or prompt when its globs allow the row's
exposed name, as with tools; a row it may not use does not exist for it. Which row
a URI reaches is decided first, among every server's routes, and the token's globs
after: a URI another server serves is never answered by a template the token can see.
"""

from fnmatch import fnmatchcase

from django.conf import settings

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.catalog.models import Server, Tool
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate, SurfaceItem
from approvals.catalog.surface_sync import KINDS, RESOURCES, offers
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
from approvals.protocol.uri_templates import matches
from approvals.protocol.uris import normalized
from approvals.tokens.credentials import token_allows
from approvals.tokens.models import ClientToken


def allowed(token: ClientToken, rows):
    return [row for row in rows if token_allows(token, row.exposed_name)]


def enabled(model):
    return model.objects.select_related("server").filter(SurfaceItem.SERVED, server__enabled=True)


def requested_uri(uri: str) -> str:
    """A URI a client named, in the normal form rules and routes compare; one longer than MAX_URI_BYTES is refused."""
    size = len(uri.encode("utf-8", "surrogatepass"))
    if size > settings.MAX_URI_BYTES:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"The URI is {size} bytes long; this console takes URIs of at most {settings.MAX_URI_BYTES} bytes",
            {"bytes": size, "maxBytes": settings.MAX_URI_BYTES},
        )
    return normalized(uri)


def resource_route(token: ClientToken, uri: str) -> Resource | ResourceTemplate | None:
    """What `uri` (in normal form) reaches, if the token may use it: the resource listed with it, else a template
    that matches it. Sync refuses a template that would reach another server's URI or template; should two
    servers' rows still overlap, the one first listed keeps the route, whatever the strings' order.
    """
    owner = enabled(Resource).filter(uri=uri).first()
    if owner is None:
        templates = enabled(ResourceTemplate).order_by("first_seen_at", "pk")
        owner = next((t for t in templates if matches(t.uri, uri)), None)
    return owner if owner is not None and token_allows(token, owner.exposed_name) else None


def upstream_uri(route: Resource | ResourceTemplate, uri: str) -> str:
    """The URI to ask the upstream for: a listed resource's own spelling, else the normal form that was routed."""
    listed = route.served_definition.get("uri") if isinstance(route, Resource) else None
    return listed if isinstance(listed, str) else uri


def prompt_route(token: ClientToken, name: str) -> Prompt | None:
    found = allowed(token, enabled(Prompt).filter(exposed_name=name))
    return found[0] if found else None


def completion_route(token: ClientToken, ref_uri: str) -> ResourceTemplate | Resource | None:
    """A completion names a resource template by its template as listed, or a resource by its URI."""
    uri = requested_uri(ref_uri)
    found = allowed(token, enabled(ResourceTemplate).filter(uri=ref_uri)) or allowed(
        token, enabled(Resource).filter(uri=uri)
    )
    return found[0] if found else None


def string_map(value, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise JsonRpcError(INVALID_PARAMS, f"{where} must be an object whose values are strings")
    return value


def prompt_arguments(prompt: Prompt, arguments) -> dict[str, str]:
    """The arguments, once they are strings of declared names and hold every required one."""
    arguments = string_map(arguments, "prompts/get 'arguments'")
    declared = {argument["name"]: argument for argument in prompt.arguments}
    missing = sorted(name for name, a in declared.items() if a.get("required") is True and name not in arguments)
    unknown = sorted(name for name in arguments if name not in declared)
    problems = [f"missing required {', '.join(missing)}"] if missing else []
    problems += [f"unknown {', '.join(unknown)}"] if unknown else []
    if problems:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Invalid arguments for prompt {prompt.exposed_name}: {'; '.join(problems)}",
            {"missing": missing, "unknown": unknown},
        )
    return arguments


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


def reachable_tools(globs: list[str]) -> list[str]:
    """The active tools' exposed names these patterns let a client call now."""
    names = Tool.objects.filter(status=Tool.Status.ACTIVE, server__enabled=True).values_list("exposed_name", flat=True)
    return [n for n in names if any(fnmatchcase(n, g) for g in globs)]


def record_use(action: str, token: ClientToken, server: Server | None, data: dict) -> None:
    """One audit event for one read, prompt or completion, whatever came of it."""
    chain.record(action, Actor.client(token), token=token, server=server, data=data)
