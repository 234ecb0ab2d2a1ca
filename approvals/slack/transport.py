"""Calling Slack's Web API: the only code that talks to Slack, with one error type.

Slack answers most failures with 200 and {"ok": false, "error": "..."}; those, an answer that is not a 2xx or not
JSON, and no answer within SLACK_TIMEOUT_SECONDS are all SlackError. SLACK_API_URL is the deployer's own setting,
not an address someone else chose, so it is reached as configured rather than under upstream/outbound's policy.
"""

import httpx
from django.conf import settings

# Read methods take a form; the write methods this app uses take JSON.
FORM_METHODS = {"users.info"}
USER_AGENT = "mcp-approval-console-slack"


class SlackError(Exception):
    """A Web API call that failed; `error` is Slack's own code (channel_not_found, invalid_auth...) when it gave one."""

    def __init__(self, message: str, error: str = ""):
        super().__init__(message)
        self.message, self.error = message, error


def configured() -> bool:
    return bool(settings.SLACK_BOT_TOKEN and settings.SLACK_SIGNING_SECRET)


def call(method: str, fields: dict) -> dict:
    """POST `fields` to the Web API's `method` with the bot token; its answer when ok, else SlackError."""
    url = f"{settings.SLACK_API_URL}/{method}"
    body = {"data": fields} if method in FORM_METHODS else {"json": fields}
    headers = {"authorization": f"Bearer {settings.SLACK_BOT_TOKEN}", "user-agent": USER_AGENT}
    try:
        with httpx.Client(timeout=settings.SLACK_TIMEOUT_SECONDS, follow_redirects=False) as client:
            response = client.post(url, headers=headers, **body)
    except httpx.TimeoutException:
        raise SlackError(f"{method}: no answer within {settings.SLACK_TIMEOUT_SECONDS:g} seconds") from None
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        raise SlackError(f"{method}: {type(exc).__name__}: {exc}"[:500]) from None
    if not response.is_success:
        raise SlackError(f"{method}: Slack answered {response.status_code}")
    try:
        answer = response.json()
    except ValueError:
        raise SlackError(f"{method}: Slack's answer is not JSON") from None
    if not isinstance(answer, dict) or answer.get("ok") is not True:
        error = str(answer.get("error", "")) if isinstance(answer, dict) else ""
        raise SlackError(f"{method}: Slack refused it: {error or 'no reason given'}", error)
    return answer
