"""Single sign-on against a real OpenID provider (tests/fixtures/oidc_provider.py), driven over HTTP: when the
provider drops a person's groups, the sign-in is refused and every credential the person held stops (issue 40:
their OAuth token and refresh still answered 200)."""

import asyncio
import html
import re

import httpx
import pytest
from django.contrib.auth.models import User

from approvals.actions import person_access
from approvals.audit.models import AuditEvent
from approvals.gateway.auth import forget_requests
from approvals.signin import sso
from tests.oauth.test_grants_follow_owner import holdings, refused_everywhere, tools_list

pytestmark = pytest.mark.node

FORM_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')


def sso_sign_in(console: str, login: str) -> tuple[httpx.Client, httpx.Response]:
    """A client of its own signs `login` in through the provider's development form; its last answer."""
    http = httpx.Client(follow_redirects=True, timeout=15)
    form = http.get(f"{console}/login/sso/")
    action = html.unescape(FORM_ACTION.search(form.text).group(1))
    fields = {"prompt": "login", "login": login, "password": "any password"}
    return http, http.post(str(form.url.join(action)), data=fields)


def test_it_refuses_a_person_the_provider_gives_no_group_and_stops_every_credential_they_held(
    oidc_provider, live_console, mcp_url, operators_may_grant
):
    forget_requests("oauth-register:127.0.0.1")
    oidc_provider.put("alice", ["mcp-operators"])
    first, signed_in = sso_sign_in(live_console, "alice")
    assert signed_in.url.path == "/queue/" and first.get(f"{live_console}/api/v1/me").status_code == 200
    held = holdings(live_console, User.objects.get(username="alice"))
    assert asyncio.run(tools_list(mcp_url, held.oauth["access_token"])).status_code == 200

    oidc_provider.put("alice", [])
    _, refused = sso_sign_in(live_console, "alice")

    assert refused.url.path == "/login/" and sso.NO_ROLE in refused.text
    access = asyncio.run(tools_list(mcp_url, held.oauth["access_token"])).status_code
    owned = asyncio.run(tools_list(mcp_url, held.client_token)).status_code
    assert refused_everywhere(held, {"access": access, "owned": owned}) == {
        "refresh": (400, "invalid_grant"),
        "api_key": 401,
        "session": 302,
        "access": 401,
        "owned": 401,
    }
    assert first.get(f"{live_console}/api/v1/me").status_code == 401
    ended = AuditEvent.objects.get(action="user.access_ended")
    assert (ended.data["username"], ended.data["reason"]) == ("alice", person_access.REFUSED_BY_PROVIDER)
    assert len(ended.data["client_tokens"]) == 2 and ended.data["sessions"] == 2
