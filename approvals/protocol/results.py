"""What an upstream server answers (tools/call, resources/read, prompts/get, completion/complete): checked first.

Only a final result is checked here (``resultType`` absent or ``complete``);
callers route ``input_required`` and task results elsewhere first.
"""

import base64
import binascii
from dataclasses import dataclass

from approvals.protocol.canonical import canonical_json
from approvals.protocol.schemas import SchemaError, validate

# Per block type: the fields that must be strings, and the optional ones that must be strings when present.
_SHAPES = {
    "text": (("text",), ()),
    "image": (("data", "mimeType"), ()),
    "audio": (("data", "mimeType"), ()),
    "resource_link": (("uri", "name"), ("title", "description", "mimeType")),
    "resource": ((), ()),
}
_BASE64_FIELDS = {"data", "blob"}
MAX_COMPLETION_VALUES = 100


@dataclass(frozen=True)
class ResultCheck:
    errors: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except binascii.Error:
        return False
    return True


def _field_errors(block: dict, where: str, required: tuple, optional: tuple) -> list[str]:
    errors = [f"{where}.{key} must be a string" for key in required if not isinstance(block.get(key), str)]
    errors += [
        f"{where}.{key} must be a string"
        for key in optional
        if block.get(key) is not None and not isinstance(block[key], str)
    ]
    errors += [
        f"{where}.{key} is not valid base64"
        for key in _BASE64_FIELDS.intersection(required)
        if isinstance(block.get(key), str) and not _is_base64(block[key])
    ]
    errors += [
        f"{where}.{key} must be an object"
        for key in ("annotations", "_meta")
        if block.get(key) is not None and not isinstance(block[key], dict)
    ]
    return errors


def _resource_errors(resource, where: str) -> list[str]:
    if not isinstance(resource, dict):
        return [f"{where} must be an object"]
    if ("text" in resource) == ("blob" in resource):
        return [f"{where} must hold exactly one of text and blob"]
    return _field_errors(resource, where, ("uri", "text" if "text" in resource else "blob"), ("mimeType",))


def _block_errors(block, where: str) -> list[str]:
    if not isinstance(block, dict):
        return [f"{where} must be an object"]
    kind = block.get("type")
    if kind not in _SHAPES:
        return [f"{where} has unknown content type {kind!r}"]
    errors = _field_errors(block, where, *_SHAPES[kind])
    if kind == "resource":
        errors += _resource_errors(block.get("resource"), f"{where}.resource")
    return errors


def _envelope_errors(result, max_bytes: int) -> list[str]:
    """Whether a result is a JSON object of plain JSON within `max_bytes` once canonical."""
    if not isinstance(result, dict):
        return ["the result must be a JSON object"]
    try:
        size = len(canonical_json(result))
    except ValueError as exc:
        return [f"the result is not plain JSON: {exc}"]
    if size > max_bytes:
        return [f"the result is {size} bytes of JSON, more than the {max_bytes} allowed"]
    return []


def check_call_result(
    result, output_schema: dict | None, *, max_bytes: int, quick: float | None = None, known=None
) -> ResultCheck:
    """Why a tools/call result must not be passed on as it is; no errors when it may.

    ``structuredContent`` is validated against ``output_schema`` and required by
    it, except on an error result (``isError: true``), which need not follow it. With `quick`,
    NotQuick when that validation would take longer; `known` stands for the schema (schemas.validate).
    """
    errors = _envelope_errors(result, max_bytes)
    if errors:
        return ResultCheck(errors)
    if result.get("resultType", "complete") != "complete":
        errors.append(f"resultType {result['resultType']!r} is not a final result")
    content = result.get("content")
    if isinstance(content, list):
        for index, block in enumerate(content):
            errors += _block_errors(block, f"content[{index}]")
    else:
        errors.append("content must be a list of content blocks")
    is_error = result.get("isError", False)
    if not isinstance(is_error, bool):
        errors.append("isError must be true or false")
    structured = result.get("structuredContent")
    if "structuredContent" in result and not isinstance(structured, dict):
        errors.append("structuredContent must be an object")
    elif output_schema is not None and is_error is not True:
        if structured is None:
            errors.append("structuredContent is missing, but the tool declares an outputSchema")
        else:
            errors += _structured_errors(output_schema, structured, quick, known)
    return ResultCheck(errors)


def _structured_errors(output_schema: dict, structured: dict, quick: float | None, known) -> list[str]:
    try:
        return validate(output_schema, structured, where="structuredContent", quick=quick, known=known)
    except SchemaError as exc:
        return [f"the tool's outputSchema is not usable: {exc.reason}"]


def check_read_result(result, *, max_bytes: int) -> ResultCheck:
    """Why a resources/read result must not be passed on: each of its contents is text or a base64 blob."""
    return ResultCheck(_envelope_errors(result, max_bytes) or _contents_errors(result.get("contents")))


def check_prompt_result(result, *, max_bytes: int) -> ResultCheck:
    """Why a prompts/get result must not be passed on: messages of a role and one content block each."""
    return ResultCheck(_envelope_errors(result, max_bytes) or _prompt_errors(result))


def check_completion_result(result, *, max_bytes: int) -> ResultCheck:
    """Why a completion/complete result must not be passed on: at most 100 string values, as the spec caps them."""
    return ResultCheck(_envelope_errors(result, max_bytes) or _completion_errors(result.get("completion")))


def _contents_errors(contents) -> list[str]:
    if not isinstance(contents, list):
        return ["contents must be a list"]
    return [error for index, item in enumerate(contents) for error in _resource_errors(item, f"contents[{index}]")]


def _prompt_errors(result: dict) -> list[str]:
    messages = result.get("messages")
    if not isinstance(messages, list):
        return ["messages must be a list"]
    errors = []
    if result.get("description") is not None and not isinstance(result["description"], str):
        errors.append("description must be a string")
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            errors.append(f"{where} must be an object")
            continue
        if message.get("role") not in ("user", "assistant"):
            errors.append(f"{where}.role must be 'user' or 'assistant'")
        errors += _block_errors(message.get("content"), f"{where}.content")
    return errors


def _completion_errors(completion) -> list[str]:
    if not isinstance(completion, dict):
        return ["completion must be an object"]
    errors = []
    values = completion.get("values")
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        errors.append("completion.values must be a list of strings")
    elif len(values) > MAX_COMPLETION_VALUES:
        errors.append(f"completion.values holds {len(values)} values, more than {MAX_COMPLETION_VALUES}")
    total = completion.get("total")
    if total is not None and (not isinstance(total, int) or isinstance(total, bool)):
        errors.append("completion.total must be an integer")
    if completion.get("hasMore") is not None and not isinstance(completion["hasMore"], bool):
        errors.append("completion.hasMore must be true or false")
    return errors


def tool_error_result(text: str) -> dict:
    """A tool execution error the model reads and can act on (the spec's ``isError: true`` result)."""
    return {"content": [{"type": "text", "text": text}], "isError": True}
