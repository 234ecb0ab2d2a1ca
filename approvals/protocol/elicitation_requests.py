"""An elicitation/create request as a whole: its mode, a URL safe to show, and the shape of an answer.

Form mode's requestedSchema is checked by approvals.protocol.elicitation. URL mode
asks a person to visit a page: the console shows the full URL and its domain and
never fetches it, so only absolute http(s) URLs that say plainly where they lead
are let through.
"""

from urllib.parse import urlsplit

from approvals.protocol.elicitation import schema_problems

ANSWER_ACTIONS = ("accept", "decline", "cancel")


def answer_problems(result, form_mode: bool) -> list[str]:
    """Why an ElicitResult (from a client, or built by the console) is malformed."""
    if not isinstance(result, dict) or result.get("action") not in ANSWER_ACTIONS:
        return ["the answer must be an object whose 'action' is accept, decline or cancel"]
    if "content" in result and (result["action"] != "accept" or not form_mode):
        return ["only an accepted form carries 'content'"]
    return []


def request_problems(params) -> list[str]:
    """Why elicitation/create params are malformed or outside the subset (form) or unsafe to show (URL)."""
    if not isinstance(params, dict):
        return ["the request's params are not an object"]
    problems = [] if isinstance(params.get("message"), str) else ["'message' must be a string"]
    mode = params.get("mode", "form")
    if mode == "url":
        return problems + url_problems(params.get("url"))
    if mode != "form":
        return problems + [f"mode {mode!r} is neither 'form' nor 'url'"]
    return problems + schema_problems(params.get("requestedSchema"))


def url_problems(url) -> list[str]:
    if not isinstance(url, str):
        return ["'url' must be a string"]
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return ["'url' is not a valid URL"]
    if parts.scheme not in ("https", "http") or not host:
        return ["'url' must be an absolute https:// or http:// URL"]
    if "@" in parts.netloc:
        # https://bank.example@evil.example reads as the bank but goes to evil: refuse what misleads.
        return ["'url' must not carry a user name or password before its host"]
    if any(c.isspace() or ord(c) < 32 for c in url):
        return ["'url' must not contain spaces or control characters"]
    return []


def url_domain(url: str) -> str:
    """The host a URL leads to, in ASCII (punycode), so that look-alike letters cannot pass for another domain."""
    host = urlsplit(url).hostname or ""
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host
