"""Which enabled server answers a resources/read, a prompts/get or a completion/complete, for one token,
and which tools its globs reach.

A token reaches a resource, template or prompt when its globs allow the row's
exposed name, as with tools; a row it may not use does not exist for it.
"""

from fnmatch import fnmatchcase

from approvals.audit import chain
from approvals.audit.chain import Actor
from approvals.catalog.models import Prompt, Resource, ResourceTemplate, Server, SurfaceItem, Tool
from approvals.catalog.surface import KINDS, RESOURCES, offers
from approvals.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError
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
