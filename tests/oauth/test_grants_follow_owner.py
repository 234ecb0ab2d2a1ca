"""Every credential a person holds stops when they are deactivated or left without a role (issue 40's finding: an
OAuth grant outlived its owner): their OAuth access and refresh tokens, the client tokens they own, their API keys
and sessions, and the calls their clients have waiting, whose clients are told; audited once."""

import asyncio
from dataclasses import dataclass

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import Client

from approvals import roles
from approvals.actions import person_access
from approvals.api import keys
from approvals.audit.models import AuditEvent
from approvals.calls.models import Call
from approvals.live import events
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.api.conftest import bearer
from tests.fixtures.calls import every_call_ended, wait_for_pending_call
from tests.fixtures.gateway import MODERN, modern_envelope, sdk_client
from tests.fixtures.people import make_user
from tests.fixtures.waiting import eventually
from tests.oauth.flow import Authorization, register

LOOKUP = ("demo_lookup_customer", {"customer_id": "C007"})


@dataclass
class Holdings:
    """What olivia holds: a browser signed in, an OAuth client's tokens, a client token of her own, an API key."""

    user: User
    browser: Client
    app: Client
    authorization: Authorization
    oauth: dict
    client_token: str
    api_key: str


def holdings(live_console, olivia=None) -> Holdings:
    """Everything `olivia` (an operator made here unless given) holds, granted on the live console."""
    host = live_console.removeprefix("http://")
    olivia = olivia or make_user("olivia", roles.OPERATOR)
    browser, app = Client(HTTP_HOST=host), Client(HTTP_HOST=host)
    browser.force_login(olivia)
    authorization = Authorization(register(app).json()["client_id"], server=live_console)
    oauth = authorization.grant(browser, app)
    _, client_token = create_token(f"{olivia.username}'s agent", owner=olivia)
    _, api_key = keys.create_key(olivia, "her bot")
    return Holdings(olivia, browser, app, authorization, oauth, client_token, api_key)


async def tools_list(mcp_url, secret) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern_envelope()}
    async with httpx.AsyncClient(timeout=15) as http:
        return await http.post(mcp_url, json=body, headers=headers)


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


def admin_form(user: User, **changes) -> dict:
    """Django admin's change form for `user`, as the page would post it, with `changes`."""
    form = {
        "username": user.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on" if user.is_active else "",
        "groups": [str(pk) for pk in user.groups.values_list("pk", flat=True)],
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        "_save": "Save",
    }
    form.update(changes)
    return {name: value for name, value in form.items() if value not in ("", None)}


def admin_changes(user: User, **changes):
    admin = Client()
    admin.force_login(make_user("root", superuser=True))
    response = admin.post(f"/admin/auth/user/{user.pk}/change/", admin_form(user, **changes))
    assert response.status_code == 302, response.content[:2000]


def refused_everywhere(held: Holdings, statuses: dict) -> dict:
    """What each credential answers now, but /mcp's (the test's event loop asks that)."""
    refresh = held.authorization.refresh(held.app, held.oauth["refresh_token"])
    return {
        "refresh": (refresh.status_code, refresh.json().get("error")),
        "api_key": held.browser.get("/api/v1/me", headers=bearer(held.api_key)).status_code,
        "session": held.browser.get("/queue/").status_code,
        **statuses,
    }


@pytest.mark.parametrize(
    ("change", "reason"),
    [({"is_active": ""}, person_access.DEACTIVATED), ({"groups": []}, person_access.NO_ROLE)],
    ids=["deactivated", "groups-removed"],
)
async def test_it_stops_every_credential_of_a_person_an_admin_deactivates_or_takes_every_group_from(
    live_console, mcp_url, demo_server, registrations_afresh, operators_may_grant, joined_groups, change, reason
):
    held = await sync_to_async(holdings)(live_console)
    assert (await tools_list(mcp_url, held.oauth["access_token"])).status_code == 200
    async with sdk_client(mcp_url, held.oauth["access_token"]) as client:
        answer = asyncio.create_task(client.call_tool(*LOOKUP))
        call = await wait_for_pending_call()
        await eventually(lambda: events.call_group(call.pk) in joined_groups, message="the call waiting")

        await sync_to_async(admin_changes)(held.user, **change)

        result = await asyncio.wait_for(answer, timeout=15)

    assert result.is_error and f"cancelled: the client token was revoked: {reason}" in text_of(result)
    access = await tools_list(mcp_url, held.oauth["access_token"])
    owned = await tools_list(mcp_url, held.client_token)
    answers = await sync_to_async(refused_everywhere)(held, {"access": access.status_code, "owned": owned.status_code})
    assert answers == {
        "refresh": (400, "invalid_grant"),
        "api_key": 401,
        "session": 302,
        "access": 401,
        "owned": 401,
    }
    assert "was revoked" in access.headers["WWW-Authenticate"]
    ended = await AuditEvent.objects.aget(action="user.access_ended")
    assert (ended.actor_name, ended.data["username"], ended.data["reason"]) == ("root", "olivia", reason)
    assert sorted(ended.data["client_tokens"]) == sorted(
        [name async for name in ClientToken.objects.filter(owner=held.user).values_list("name", flat=True)]
    )
    assert len(ended.data["client_tokens"]) == 2 and len(ended.data["api_keys"]) == 1
    assert ended.data["calls_cancelled"] == 1 and ended.data["refresh_tokens"] == 1 and ended.data["sessions"] == 1
    assert (await Call.objects.aget(pk=call.pk)).status == Call.Status.CANCELLED
    await every_call_ended()


@pytest.mark.parametrize("change", ["deactivated", "groups-removed"])
async def test_it_refuses_every_credential_of_an_owner_changed_behind_the_signals_back(
    live_console, mcp_url, registrations_afresh, operators_may_grant, change
):
    # An update of many rows sends no signal and revokes nothing: each credential's own check refuses.
    held = await sync_to_async(holdings)(live_console)
    if change == "deactivated":
        await User.objects.filter(pk=held.user.pk).aupdate(is_active=False)
    else:
        await User.groups.through.objects.filter(user_id=held.user.pk).adelete()

    access = await tools_list(mcp_url, held.oauth["access_token"])
    owned = await tools_list(mcp_url, held.client_token)
    answers = await sync_to_async(refused_everywhere)(held, {"access": access.status_code, "owned": owned.status_code})

    assert answers["refresh"] == (400, "invalid_grant") and answers["access"] == answers["owned"] == 401
    assert answers["api_key"] in (401, 403) and answers["session"] in (302, 403)
    assert "whose access to the console ended" in owned.headers["WWW-Authenticate"]
    assert not await ClientToken.objects.filter(revoked_at__isnull=False).aexists()
