"""Input requests as the queue shows them: rows among pending calls, and the form an operator answers in.

A sampling request is shown as the conversation a server hands a model, all of it
untrusted: its content blocks as a tool result's are (display/results.py), their
number and text bounded, its preferences as a bounded value tree.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from approvals.display import results
from approvals.display.values import Tree, value_tree
from approvals.forms.schema import build_form
from approvals.inputs import requests
from approvals.inputs.models import InputRequest

INPUT_CARD = "approvals/_input_request.html"
# On the queue a request is a row of the list, its card the detail the panel shows when it is selected.
INPUT_ROW = "approvals/_input_row.html"


def shown_inputs():
    return InputRequest.objects.select_related("call__token", "call__tool", "server")


def queue_inputs():
    """What the queue shows beside pending calls: open requests, and refusals young enough to still matter."""
    recent = timezone.now() - timedelta(seconds=settings.INPUT_TIMEOUT_SECONDS)
    shown = Q(status=InputRequest.Status.PENDING) | Q(status=InputRequest.Status.REFUSED, created_at__gte=recent)
    return shown_inputs().filter(shown).order_by("created_at", "pk")


def answer_form(request: InputRequest, data=None):
    """The form of fields an elicitation's requestedSchema describes, its defaults filled in."""
    form = build_form(requests.requested_schema(request), data=data, prefix=f"input-{request.pk}")
    form.input_id = request.pk
    return form


MAX_TEXT = 20_000  # characters of one text block, or of the system prompt, that a card shows


@dataclass
class Turn:
    role: str
    blocks: list[results.Block] = field(default_factory=list)


@dataclass
class Sampling:
    turns: list[Turn]
    system_prompt: str
    max_tokens: object
    include_context: str
    preferences: Tree | None
    truncated: bool  # blocks or text left out


def clip(text: str) -> tuple[str, bool]:
    return (text[:MAX_TEXT], True) if len(text) > MAX_TEXT else (text, False)


def sampling_blocks(params) -> list[tuple[str, dict]]:
    """Every content block of the request's messages with its message's role, in order, up to results.MAX_BLOCKS."""
    messages = params.get("messages") if isinstance(params, dict) else None
    found = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else [content]:
            found.append((str(message.get("role", ""))[:40], block))
            if len(found) == results.MAX_BLOCKS:
                return found
    return found


def sampling_view(request: InputRequest) -> Sampling:
    params = request.params if isinstance(request.params, dict) else {}
    turns, truncated = [], len(sampling_blocks(params)) == results.MAX_BLOCKS
    for index, (role, raw) in enumerate(sampling_blocks(params)):
        if not turns or turns[-1].role != role:
            turns.append(Turn(role))
        block = results.block_of(index, raw)
        block.text, clipped = clip(block.text)
        truncated = truncated or clipped
        turns[-1].blocks.append(block)
    system_prompt, clipped = clip(params.get("systemPrompt") if isinstance(params.get("systemPrompt"), str) else "")
    preferences = params.get("modelPreferences")
    return Sampling(
        turns=turns,
        system_prompt=system_prompt,
        max_tokens=params.get("maxTokens"),
        include_context=str(params.get("includeContext", "")),
        preferences=value_tree(preferences, {}) if isinstance(preferences, dict) and preferences else None,
        truncated=truncated or clipped,
    )


def sampling_media(request: InputRequest, index: int) -> tuple[bytes, str] | None:
    """The bytes and media type of an image or audio block of a sampling request, when the console may serve them."""
    if request.method != requests.SAMPLE:
        return None
    return results.media_of({"content": [raw for _, raw in sampling_blocks(request.params)]}, index)
