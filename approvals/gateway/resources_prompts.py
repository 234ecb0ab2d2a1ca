"""Resources, resource templates, prompts and completion for clients of either era.

The lists come from the catalog (see listing). A read, a prompt or a completion
is routed by the catalog's table to the one enabled server that serves it, runs
on that server's pooled session, and is answered as the upstream gave it, less
its envelope: text and base64 blobs alike pass through unchanged. Each is
audited with the token, the server and what was asked, whatever came of it.
A read or a prompt that a policy rule names is governed like a call (calls.reads): it may
wait in the queue, on an SSE stream with keep-alives as a held tool call does, and a denial
is the client's error; completion runs as soon as it routes.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from asgiref.sync import sync_to_async

from approvals.calls import reads
from approvals.calls.models import Call
from approvals.calls.upstream_call import without_envelope
from approvals.calls.upstream_sessions import session_pool, spec_for
from approvals.catalog import routes
from approvals.catalog.models import Server
from approvals.catalog.surface_models import Prompt, Resource, ResourceTemplate
from approvals.gateway import listing, streams
from approvals.protocol import jsonrpc
from approvals.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, JsonRpcError, Request
from approvals.protocol.revisions import MODERN
from approvals.protocol.uri_templates import expanded
from approvals.tokens.context import ClientContext
from approvals.upstream import UpstreamError

# An upstream's refusal of what it was asked, passed on as the client's own mistake rather than the console's.
REFUSALS = {INVALID_PARAMS, RESOURCE_NOT_FOUND}
AUDITED_CHARS = 2000


def resource_not_found(ctx: ClientContext, uri: str) -> JsonRpcError:
    # The 2025 revisions name -32002; 2026-07-28 answers an unknown resource as invalid params (SEP-2164).
    code = INVALID_PARAMS if ctx.era == MODERN else RESOURCE_NOT_FOUND
    return JsonRpcError(code, f"Resource not found: {uri}", {"uri": uri})


def clipped(text: str) -> str:
    # A template matches URIs of any length, and a client chooses what it asks for: the audit log keeps a bounded part.
    return text if len(text) <= AUDITED_CHARS else text[:AUDITED_CHARS] + "…"


def string_param(params: dict, name: str, method: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise JsonRpcError(INVALID_PARAMS, f"{method} needs a string '{name}'")
    return value


async def list_page(ctx: ClientContext, method: str, params: dict) -> dict:
    return await sync_to_async(listing.page)(listing.LISTINGS[method], ctx.token, params, ctx.era)


async def ask_upstream(ctx: ClientContext, server: Server, what: str, ask, refusal) -> dict:
    """The upstream's answer to `ask(session)`, or a JsonRpcError saying in protocol terms why there is none."""
    try:
        session = await session_pool().get(await spec_for(server, ctx.token.pk))
        return without_envelope(await ask(session))
    except UpstreamError as exc:
        raise failure(server, what, exc, refusal) from None


def failure(server: Server, what: str, exc: UpstreamError, refusal) -> JsonRpcError:
    """The client's error for an upstream's failure: its refusal as the client's mistake, anything else as ours."""
    if exc.code in REFUSALS:
        return refusal(exc.message)
    retry = " It may succeed if retried." if exc.retryable else ""
    return JsonRpcError(
        INTERNAL_ERROR, f"The upstream server {server.name} failed to answer {what}: {exc.message}.{retry}"
    )


async def audited(action: str, ctx: ClientContext, server: Server | None, data: dict, answer) -> dict:
    """Run `answer()` and record one event of what came of it, the failure included."""
    data = {"era": ctx.era, **data}
    try:
        result = await answer()
    except JsonRpcError as exc:
        await sync_to_async(routes.record_use)(
            action, ctx.token, server, {**data, "outcome": "error", "code": exc.code, "error": exc.message}
        )
        raise
    size = len(jsonrpc.encode(result))
    await sync_to_async(routes.record_use)(action, ctx.token, server, {**data, "outcome": "answered", "bytes": size})
    return result


async def record_unknown(action: str, ctx: ClientContext, data: dict) -> None:
    # Asking for what the token cannot reach is worth knowing about too.
    await sync_to_async(routes.record_use)(action, ctx.token, None, {"era": ctx.era, **data, "outcome": "unknown"})


@dataclass(frozen=True)
class Routed:
    """A read or a prompt get, checked and routed: `answer(emit)` runs it; it may wait for operators when `may_wait`."""

    may_wait: bool
    answer: Callable[[streams.Emit], Awaitable[dict]]


def progress_token(params: dict):
    meta = params.get("_meta")
    return meta.get("progressToken") if isinstance(meta, dict) else None


async def prepared(ctx: ClientContext, read: reads.Read, upstream, action: str, data: dict) -> Routed:
    """What answers the read: the upstream at once, or once the policy lets it through when a rule governs it."""
    may_wait = await sync_to_async(reads.governed_by_a_rule)(ctx.token, read)

    async def answer(emit) -> dict:
        async def run():
            return await reads.governed(ctx, read, upstream, emit) if may_wait else await upstream()

        return await audited(action, ctx, read.server, data, run)

    return Routed(may_wait, answer)


def uri_param(params: dict, name: str, method: str) -> str:
    """A URI the client names, in the normal form rules and routes see (routes.requested_uri)."""
    return routes.requested_uri(string_param(params, name, method))


async def read_resource(ctx: ClientContext, params: dict, jsonrpc_id=None) -> Routed:
    uri = uri_param(params, "uri", "resources/read")
    route = await sync_to_async(routes.resource_route)(ctx.token, uri)
    if route is None:
        await record_unknown("resource.read", ctx, {"uri": clipped(uri)})
        raise resource_not_found(ctx, uri)

    def refusal(message):
        return JsonRpcError(resource_not_found(ctx, uri).code, message, {"uri": uri})

    async def upstream():
        asked = routes.upstream_uri(route, uri)
        return await ask_upstream(
            ctx, route.server, "resources/read", lambda session: session.read_resource(asked), refusal
        )

    read = reads.Read(
        Call.Kind.RESOURCE, route.server, uri, {"uri": uri}, route.served_digest, jsonrpc_id, progress_token(params)
    )
    return await prepared(ctx, read, upstream, "resource.read", {"uri": clipped(uri), "via": route.exposed_name})


async def get_prompt(ctx: ClientContext, params: dict, jsonrpc_id=None) -> Routed:
    name = string_param(params, "name", "prompts/get")
    prompt = await sync_to_async(routes.prompt_route)(ctx.token, name)
    if prompt is None:
        await record_unknown("prompt.got", ctx, {"prompt": clipped(name)})
        raise JsonRpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = routes.prompt_arguments(prompt, params.get("arguments"))

    def refusal(message):
        return JsonRpcError(INVALID_PARAMS, message)

    async def upstream():
        return await ask_upstream(
            ctx,
            prompt.server,
            "prompts/get",
            lambda session: session.get_prompt(prompt.upstream_name, arguments),
            refusal,
        )

    read = reads.Read(
        Call.Kind.PROMPT,
        prompt.server,
        prompt.exposed_name,
        arguments,
        prompt.served_digest,
        jsonrpc_id,
        progress_token(params),
    )
    data = {"prompt": prompt.exposed_name, "arguments": sorted(arguments)}
    return await prepared(ctx, read, upstream, "prompt.got", data)


async def complete(ctx: ClientContext, params: dict) -> dict:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise JsonRpcError(INVALID_PARAMS, "completion/complete needs a 'ref' object and an 'argument' object")
    name = string_param(argument, "name", "completion/complete 'argument'")
    if not isinstance(argument.get("value"), str):
        raise JsonRpcError(INVALID_PARAMS, "completion/complete needs a string 'argument.value'")
    context = params.get("context")
    if context is not None and not isinstance(context, dict):
        raise JsonRpcError(INVALID_PARAMS, "completion/complete 'context' must be an object")
    if context is not None:
        context = {"arguments": routes.string_map(context.get("arguments"), "completion/complete 'context.arguments'")}
    upstream_ref, owner, subject = await completion_subject(ctx, ref, name)
    # What the completion would read: the prompt with the arguments known so far, or the URI they expand to.
    known = {**(context or {}).get("arguments", {}), name: argument["value"]}
    beside = completion_reads(owner, known)

    def refusal(message):
        return JsonRpcError(INVALID_PARAMS, message)

    async def answer():
        refused = await sync_to_async(reads.refused_beside_the_read)(ctx.token, beside, f"completion of {subject}")
        if refused is not None:
            raise refused
        if not isinstance(owner.server.capabilities.get("completions"), dict):
            # The owner completes nothing; an empty completion says so without troubling it.
            return {"completion": {"values": [], "hasMore": False}}
        upstream_argument = {"name": name, "value": argument["value"]}
        return await ask_upstream(
            ctx,
            owner.server,
            "completion/complete",
            lambda session: session.complete(upstream_ref, upstream_argument, context),
            refusal,
        )

    data = {"ref": clipped(subject), "argument": clipped(name)}
    return await audited("completion.asked", ctx, owner.server, data, answer)


def completion_reads(owner: Prompt | Resource | ResourceTemplate, known: dict) -> list[reads.Read]:
    """The reads a completion stands beside, for the rules that govern them: the prompt got with the arguments known
    so far; the resource, or the template as named and as those arguments expand it."""
    if isinstance(owner, Prompt):
        return [reads.Read(Call.Kind.PROMPT, owner.server, owner.exposed_name, known, owner.served_digest)]
    uris = [owner.uri]
    if isinstance(owner, ResourceTemplate):
        uris.append(routes.requested_uri(expanded(owner.uri, known)))
    return [reads.Read(Call.Kind.RESOURCE, owner.server, uri, {"uri": uri}, owner.served_digest) for uri in uris]


async def completion_subject(ctx: ClientContext, ref: dict, argument: str):
    """The ref to send upstream, the catalog row that owns it, and what the audit event names."""
    if ref.get("type") == "ref/prompt":
        name = string_param(ref, "name", "completion/complete 'ref'")
        prompt = await sync_to_async(routes.prompt_route)(ctx.token, name)
        if prompt is None:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
        if argument not in {a["name"] for a in prompt.arguments}:
            raise JsonRpcError(INVALID_PARAMS, f"Prompt {name} has no argument {argument!r}")
        return {"type": "ref/prompt", "name": prompt.upstream_name}, prompt, name
    if ref.get("type") == "ref/resource":
        uri = string_param(ref, "uri", "completion/complete 'ref'")
        owner = await sync_to_async(routes.completion_route)(ctx.token, uri)
        if owner is None:
            raise resource_not_found(ctx, uri)
        return {"type": "ref/resource", "uri": uri}, owner, uri
    raise JsonRpcError(INVALID_PARAMS, "completion/complete 'ref.type' must be 'ref/prompt' or 'ref/resource'")


async def answer(ctx: ClientContext, method: str, params: dict) -> dict:
    """The result of one of METHODS but the GOVERNED ones, before the era dresses it."""
    if method in listing.LISTINGS:
        return await list_page(ctx, method, params)
    return await complete(ctx, params)


async def respond_to_read(
    ctx: ClientContext,
    request: Request,
    *,
    stream: bool,
    finish: Callable[[dict], dict],
    error_status: Callable[[int], int],
    headers: dict | None = None,
):
    """The response to one of GOVERNED: on an SSE stream, as a tool call's, when the client takes one and a rule
    governs it (a read may then wait for operators, and the stream's keep-alives keep it open); else one JSON answer.
    Errors found before it runs (bad params, an unknown URI) are raised, and answered as JSON.
    """
    read = await GOVERNED[request.method](ctx, request.params, request.id)
    return await streams.answer_request(
        ctx,
        request,
        read.answer,
        stream=stream and read.may_wait,
        finish=finish,
        error_status=error_status,
        headers=headers,
    )


# What a policy rule may hold, deny or let through, as it does a tool call.
GOVERNED = {"resources/read": read_resource, "prompts/get": get_prompt}
METHODS = {*GOVERNED, "completion/complete", *(method for method in listing.LISTINGS if method != "tools/list")}
