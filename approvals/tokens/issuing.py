"""Issuing client tokens for the create_token command and the Tokens and Connect pages.

credentials.py makes and checks secrets; this module decides whether a requested
token may be made, and says in words why not.
"""

import datetime
import re

from django.contrib.auth import get_user_model
from django.db import IntegrityError
from django.utils import timezone

from approvals import roles
from approvals.forms.fields import whole_number
from approvals.tokens import credentials
from approvals.tokens.models import ClientToken

NAME_MAX = ClientToken._meta.get_field("name").max_length
DESCRIPTION_MAX = ClientToken._meta.get_field("description").max_length
GLOB_MAX = 200
DURATION = re.compile(r"(\d{1,6})([dhm])")
UNITS = {"d": "days", "h": "hours", "m": "minutes"}
# Above this a per-token number is a typo, not a limit.
LIMIT_MAX = 1_000_000


class TokenError(ValueError):
    """`errors` in words; `fields` the same by the form field each is about, for a form to mark that field."""

    def __init__(self, errors: list[str], fields: dict[str, list[str]] | None = None):
        super().__init__("; ".join(errors))
        self.errors = errors
        self.fields = fields or {}

    @classmethod
    def by_field(cls, fields: dict[str, list[str]]) -> "TokenError":
        return cls([error for errors in fields.values() for error in errors], {f: e for f, e in fields.items() if e})


def parse_globs(text: str) -> list[str]:
    """One pattern per line, blank lines ignored; nothing at all means every tool."""
    return [line.strip() for line in text.splitlines() if line.strip()] or ["*"]


def token_problems(name: str, globs: list[str]) -> list[str]:
    """Why a token with this name and these patterns may not be issued; empty when it may."""
    return name_problems(name) + glob_problems(globs)


def name_problems(name: str) -> list[str]:
    errors = []
    if not name:
        errors.append("a token needs a name")
    elif len(name) > NAME_MAX or not name.isprintable():
        errors.append(f"the name must be at most {NAME_MAX} printable characters")
    elif name.lower() == ClientToken.ANONYMOUS:
        # The gateway uses that row for unauthenticated clients, when they are allowed at all.
        errors.append(f"{ClientToken.ANONYMOUS!r} is reserved for clients that send no token")
    elif ClientToken.objects.filter(name__iexact=name).exists():
        errors.append(f"a token named {name!r} exists already (revoked tokens keep their names)")
    return errors


def glob_problems(globs: list[str]) -> list[str]:
    errors = [] if globs else ["give at least one tool pattern, or * for every tool"]
    for glob in globs:
        if len(glob) > GLOB_MAX or any(c.isspace() for c in glob):
            errors.append(f"tool pattern {glob[:40]!r} must be at most {GLOB_MAX} characters without spaces")
    return errors


def parse_duration(text: str) -> datetime.timedelta:
    """'30d', '12h', '45m' or '0'."""
    text = text.strip()
    if text == "0":
        return datetime.timedelta(0)
    match = DURATION.fullmatch(text)
    if match is None:
        raise TokenError([f"{text[:40]!r} is no duration: write it as 30d, 12h or 45m"])
    return datetime.timedelta(**{UNITS[match[2]]: int(match[1])})


def parse_expiry(text: str, now: datetime.datetime | None = None) -> datetime.datetime | None:
    """When a token given '30d', '12h', an ISO date (its start, in the console's time zone) or an ISO time expires.

    Blank means never; a moment already past is refused.
    """
    text, now = text.strip(), now or timezone.now()
    if not text:
        return None
    if DURATION.fullmatch(text):
        when = now + parse_duration(text)
    else:
        try:
            when = datetime.datetime.fromisoformat(text)
        except ValueError:
            raise TokenError([f"expiry {text[:40]!r} is neither a duration (30d, 12h) nor an ISO date"]) from None
        if timezone.is_naive(when):
            when = timezone.make_aware(when)
    if when <= now:
        raise TokenError([f"expiry {text[:40]!r} is not in the future"])
    return when


def parse_limit(text: str, what: str) -> int | None:
    """A per-token number; blank for the console-wide setting."""
    text = text.strip()
    if not text:
        return None
    number = whole_number(text)
    if number is None or number > LIMIT_MAX:
        raise TokenError([f"{what} must be a whole number from 0 to {LIMIT_MAX}, or blank for the global setting"])
    return number


def parse_details(owner="", description="", expires="", rate_per_minute="", max_pending_calls="") -> dict:
    """The ClientToken fields set beside the name and tools, from what was typed; TokenError lists every fault."""
    details = {"description": description.strip()}
    errors = {field: [] for field in ("owner", "description", "expires", "rate_per_minute", "max_pending_calls")}
    if len(details["description"]) > DESCRIPTION_MAX:
        errors["description"].append(f"the description must be at most {DESCRIPTION_MAX} characters")
    details["owner"] = get_user_model().objects.filter(username=owner.strip()).first() if owner.strip() else None
    if owner.strip() and details["owner"] is None:
        errors["owner"].append(f"there is no user named {owner.strip()[:40]!r} to own the token")
    elif details["owner"] is not None and not roles.in_standing(details["owner"].pk):
        # Such a person's tokens are refused at every request (credentials.owner_in_standing).
        errors["owner"].append(
            f"{owner.strip()[:40]!r} is deactivated or holds no role, so a token they own would be refused"
        )
    parsers = {
        "expires": ("expires_at", lambda: parse_expiry(expires)),
        "rate_per_minute": ("rate_per_minute", lambda: parse_limit(rate_per_minute, "the rate per minute")),
        "max_pending_calls": ("max_pending_calls", lambda: parse_limit(max_pending_calls, "the cap on pending calls")),
    }
    for field, (detail, parse) in parsers.items():
        try:
            details[detail] = parse()
        except TokenError as exc:
            errors[field].extend(exc.errors)
    if details.get("rate_per_minute") == 0:
        errors["rate_per_minute"].append(
            "a rate of 0 requests a minute refuses every request: revoke the token instead"
        )
    if any(errors.values()):
        raise TokenError.by_field(errors)
    return details


def issue(name: str, globs: list[str], user=None, **details) -> tuple[ClientToken, str]:
    """The new token and its secret, which exists nowhere else: show it once and drop it.

    `details` are what parse_details returns.
    """
    name = name.strip()
    problems = {"name": name_problems(name), "tool_globs": glob_problems(globs)}
    if any(problems.values()):
        raise TokenError.by_field(problems)
    try:
        return credentials.create_token(name, globs, user, **details)
    except IntegrityError:
        raise TokenError.by_field({"name": [f"a token named {name!r} exists already"]}) from None
