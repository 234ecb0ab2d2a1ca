"""A sampling/createMessage request as a whole, and the reply a person writes in a model's place.

A server asks its client's model for a completion: `messages` (each a role and one
content block or a list of them), `maxTokens`, and optionally a system prompt,
model preferences and which context to include. When an operator answers instead
of a model, their text is the assistant's message and the reply says who wrote it.
"""

ROLES = ("user", "assistant")
INCLUDE_CONTEXT = ("none", "thisServer", "allServers")
# Declining is the client's refusal in MCP's own words: JSON-RPC error -1, "User rejected".
REJECTED = -1
REJECTED_MESSAGE = "User rejected sampling request"


def request_problems(params) -> list[str]:
    """Why sampling/createMessage params are malformed."""
    if not isinstance(params, dict):
        return ["the request's params are not an object"]
    problems = []
    messages = params.get("messages")
    if not isinstance(messages, list):
        problems.append("'messages' must be a list")
    else:
        for index, message in enumerate(messages):
            problems += message_problems(index, message)
    tokens = params.get("maxTokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        problems.append("'maxTokens' must be a positive integer")
    if "systemPrompt" in params and not isinstance(params["systemPrompt"], str):
        problems.append("'systemPrompt' must be a string")
    if "includeContext" in params and params["includeContext"] not in INCLUDE_CONTEXT:
        problems.append(f"'includeContext' must be one of {', '.join(INCLUDE_CONTEXT)}")
    if "modelPreferences" in params and not isinstance(params["modelPreferences"], dict):
        problems.append("'modelPreferences' must be an object")
    return problems


def message_problems(index: int, message) -> list[str]:
    if not isinstance(message, dict):
        return [f"message {index} is not an object"]
    problems = [] if message.get("role") in ROLES else [f"message {index}: 'role' must be user or assistant"]
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content]
    if not blocks or not all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks):
        problems.append(f"message {index}: 'content' must be a content block or a list of them")
    return problems


def written_reply(text: str, author: str) -> dict:
    """The CreateMessageResult of a reply a person wrote: the assistant's text, the model named for its author."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": f"operator:{author}",
        "stopReason": "endTurn",
    }


def rejection() -> dict:
    return {"code": REJECTED, "message": REJECTED_MESSAGE}
