"""A tools/call result as blocks a page can show, one per content type.

Everything here came from an upstream server. Text stays text (the templates
escape it); images and audio are served back only under a media type from a
short list, through the console's own URL, so nothing upstream picks a type a
browser would run; links are links only for http and https.
"""

import base64
import binascii
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from approvals.display.values import value_tree

IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
AUDIO_TYPES = {
    "audio/wav",
    "audio/x-wav",
    "audio/wave",
    "audio/mpeg",
    "audio/ogg",
    "audio/webm",
    "audio/mp4",
    "audio/aac",
    "audio/flac",
}
PLAYABLE = {"image": IMAGE_TYPES, "audio": AUDIO_TYPES}
MAX_BLOCKS = 100


@dataclass
class Block:
    index: int
    type: str
    text: str = ""
    mime_type: str = ""
    playable: bool = False
    size: int = 0
    uri: str = ""
    link: bool = False
    name: str = ""
    title: str = ""
    description: str = ""
    audience: list = field(default_factory=list)


def decoded_size(data) -> int:
    try:
        return len(base64.b64decode(data, validate=True)) if isinstance(data, str) else 0
    except (binascii.Error, ValueError):
        return 0


def is_web_link(uri: str) -> bool:
    return urlsplit(uri).scheme in ("http", "https")


def text_of(value) -> str:
    return value if isinstance(value, str) else ""


def block_of(index: int, raw) -> Block:
    if not isinstance(raw, dict):
        return Block(index, "unknown", text=repr(raw)[:200])
    kind = text_of(raw.get("type")) or "unknown"
    annotations = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
    audience = annotations.get("audience")
    block = Block(index, kind, audience=[str(a) for a in audience] if isinstance(audience, list) else [])
    if kind == "text":
        block.text = text_of(raw.get("text"))
    elif kind in PLAYABLE:
        block.mime_type = text_of(raw.get("mimeType"))
        block.playable = block.mime_type in PLAYABLE[kind]
        block.size = decoded_size(raw.get("data"))
    elif kind == "resource_link":
        fill_resource(block, raw)
        block.name, block.title, block.description = (
            text_of(raw.get("name")),
            text_of(raw.get("title")),
            text_of(raw.get("description")),
        )
    elif kind == "resource":
        fill_resource(block, raw.get("resource") if isinstance(raw.get("resource"), dict) else {})
    return block


def fill_resource(block: Block, resource: dict):
    block.uri, block.mime_type = text_of(resource.get("uri")), text_of(resource.get("mimeType"))
    block.link = is_web_link(block.uri)
    block.text = text_of(resource.get("text"))
    block.size = decoded_size(resource.get("blob"))


def result_blocks(result) -> list[Block]:
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return []
    return [block_of(index, raw) for index, raw in enumerate(content[:MAX_BLOCKS])]


def structured_tree(result, output_schema):
    if not isinstance(result, dict) or "structuredContent" not in result:
        return None
    return value_tree(result["structuredContent"], output_schema)


def media_of(result, index) -> tuple[bytes, str] | None:
    """The bytes and media type of an image, audio or embedded-resource block, when the console may serve them."""
    content = result.get("content") if isinstance(result, dict) else None
    if (
        not isinstance(content, list)
        or not 0 <= index < min(len(content), MAX_BLOCKS)
        or not isinstance(content[index], dict)
    ):
        return None
    raw = content[index]
    if raw.get("type") in PLAYABLE:
        data, mime_type = raw.get("data"), raw.get("mimeType")
        if mime_type not in PLAYABLE[raw["type"]]:
            return None
    elif raw.get("type") == "resource" and isinstance(raw.get("resource"), dict):
        # An embedded binary is offered as a download of no particular type.
        data, mime_type = raw["resource"].get("blob"), "application/octet-stream"
    else:
        return None
    try:
        return base64.b64decode(data, validate=True), mime_type
    except (binascii.Error, ValueError, TypeError):
        return None
