"""Whose own upstream connection a client token's calls use on a per-person server: its owner's only when the owner
made the token, so that no token an admin makes and names someone else the owner of rides that person's account."""

import html
from io import StringIO

from asgiref.sync import async_to_sync
from django.core.management import call_command

from approvals import roles
from approvals.calls.upstream_sessions import spec_for
from approvals.catalog.models import Server
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from approvals.upstream_oauth.models import UpstreamGrant
from tests.fixtures.calls import pending_call
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user

PER_PERSON = {"oauth": Server.OAuth.AUTHORIZATION_CODE, "connection": Server.Connection.PER_PERSON}


def files_with_alices_connection():
    alice = make_user("alice", roles.OPERATOR)
    files = make_server("Files", url="https://files.example/mcp", tool_prefix="files_", **PER_PERSON)
    UpstreamGrant.objects.create(server=files, user=alice, access_token="alices-token", status="connected")
    return alice, files


def test_create_token_owner_alice_does_not_ride_alices_own_connection(transactional_db):
    alice, files = files_with_alices_connection()
    out = StringIO()
    call_command("create_token", "admins-agent", "--owner", "alice", stdout=out)
    given = ClientToken.objects.get(name="admins-agent")
    assert given.owner == alice
    assert async_to_sync(spec_for)(files, given.pk).identity == ""
    assert "alice's own connections are not used by this token" in out.getvalue()

    admin = make_user("root", roles.ADMIN)
    by_an_admin, _ = create_token("for-alice", ["*"], admin, owner=alice)
    assert async_to_sync(spec_for)(files, by_an_admin.pk).identity == ""


def test_a_token_its_owner_made_uses_the_owners_own_connection(transactional_db):
    alice, files = files_with_alices_connection()
    own, _ = create_token("alices-agent", ["*"], alice, owner=alice)
    assert async_to_sync(spec_for)(files, own.pk).identity == str(alice.pk)
    own.owner = make_user("bob", roles.OPERATOR)  # an admin passing it on makes it act as no one
    own.save()
    assert async_to_sync(spec_for)(files, own.pk).identity == ""


def test_the_queue_says_a_given_token_acts_as_no_one_on_a_per_person_server(login):
    alice, files = files_with_alices_connection()
    given, _ = create_token("for-alice", ["*"], None, owner=alice)
    pending_call(given, make_tool(files, "whoami"))
    page = html.unescape(login("operator").get("/queue/").content.decode())
    assert "alice's own connection" not in page
    assert "this client token acts as no one there" in page
