"""Syncing a server that requires OAuth, against a real server on 127.0.0.1 that accepts one token."""

from datetime import timedelta

from django.utils import timezone

from approvals.catalog.models import Server
from approvals.catalog.sync import sync_server
from approvals.upstream_oauth.models import UpstreamClient, UpstreamGrant
from tests.fixtures.catalog import make_server
from tests.upstream import test_bearer_transport
from tests.upstream.test_bearer_transport import GOOD, PRM

# The server that accepts one token, as a fixture of this module too.
server = test_bearer_transport.server


def test_a_401_makes_the_server_need_authorization_and_its_token_then_syncs_it(server, transactional_db):
    url, seen = server
    tracker = make_server("Files", url=f"{url}/mcp", tool_prefix="files_")
    report = sync_server(tracker)
    tracker.refresh_from_db()
    assert not report.ok and "needs authorization" in report.error
    assert (tracker.health, tracker.oauth) == (Server.Health.NEEDS_AUTHORIZATION, Server.OAuth.AUTHORIZATION_CODE)
    assert UpstreamClient.objects.get(server=tracker).resource_metadata_url == PRM
    grant = UpstreamGrant.objects.get(server=tracker, user=None)
    assert (grant.status, grant.wanted_scope) == (UpstreamGrant.Status.NEEDS_AUTHORIZATION, "files:read")

    grant.access_token, grant.status = GOOD, UpstreamGrant.Status.CONNECTED
    grant.expires_at = timezone.now() + timedelta(hours=1)
    grant.save()
    assert sync_server(tracker).ok
    tracker.refresh_from_db()
    assert tracker.health == Server.Health.OK
    assert list(tracker.tools.values_list("upstream_name", flat=True)) == ["t"]
    assert seen[-1][1] == f"Bearer {GOOD}"
