"""Issuing client tokens for the create_token command and the Tokens and Connect pages.

credentials.py makes and checks secrets; this module decides whether a requested
token may be made, and says in words why not.
"""

from fnmatch import fnmatchcase

from django.db import IntegrityError

from approvals.models import ClientToken, Tool
from approvals.tokens import credentials

NAME_MAX = ClientToken._meta.get_field("name").max_length
GLOB_MAX = 200


class TokenError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def parse_globs(text: str) -> list[str]:
    """One pattern per line, blank lines ignored; nothing at all means every tool."""
    return [line.strip() for line in text.splitlines() if line.strip()] or ["*"]


def token_problems(name: str, globs: list[str]) -> list[str]:
    """Why a token with this name and these patterns may not be issued; empty when it may."""
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
    if not globs:
        errors.append("give at least one tool pattern, or * for every tool")
    for glob in globs:
        if len(glob) > GLOB_MAX or any(c.isspace() for c in glob):
            errors.append(f"tool pattern {glob[:40]!r} must be at most {GLOB_MAX} characters without spaces")
    return errors


def issue(name: str, globs: list[str], user=None) -> tuple[ClientToken, str]:
    """The new token and its secret, which exists nowhere else: show it once and drop it."""
    name = name.strip()
    errors = token_problems(name, globs)
    if errors:
        raise TokenError(errors)
    try:
        return credentials.create_token(name, globs, user)
    except IntegrityError:
        raise TokenError([f"a token named {name!r} exists already"]) from None


def reachable_tools(globs: list[str]) -> list[str]:
    """The active tools' exposed names these patterns let a client call now."""
    names = Tool.objects.filter(status=Tool.Status.ACTIVE, server__enabled=True).values_list("exposed_name", flat=True)
    return [n for n in names if any(fnmatchcase(n, g) for g in globs)]
