"""OAuth scopes as client-token tool patterns: `tools:<glob>` grants the tools whose exposed names match the glob.

`tools:*` is every tool, `tools:github_*` one server's (exposed names start with the server's prefix), and a
client asking for nothing gets what the role of the person who allows it may grant (oauth.consent_limits); that person
sees the patterns and the tools they reach.
"""

from approvals.tokens import issuing

PREFIX = "tools:"
EVERY_TOOL = PREFIX + "*"


def glob_of(scope: str) -> str | None:
    """The tool pattern a scope names; None for a scope this console does not know."""
    if not scope.startswith(PREFIX) or not scope[len(PREFIX) :]:
        return None
    glob = scope[len(PREFIX) :]
    return None if issuing.glob_problems([glob]) else glob


def globs_of(scopes) -> list[str]:
    return [glob for glob in map(glob_of, scopes) if glob is not None]


def known(scopes) -> bool:
    return bool(scopes) and all(glob_of(scope) is not None for scope in scopes)


class ToolScopes:
    """django-oauth-toolkit's scopes backend: what discovery advertises and a client gets by default."""

    def get_all_scopes(self):
        return {EVERY_TOOL: "Use every tool the console serves"}

    def get_available_scopes(self, application=None, request=None, *args, **kwargs):
        return [EVERY_TOOL]

    def get_default_scopes(self, application=None, request=None, *args, **kwargs):
        return [EVERY_TOOL]
