"""The event stream across two web processes on PostgreSQL and Redis: a bot on one hears of what the
other does, and resumes on either."""

import httpx
import pytest
from asgiref.sync import sync_to_async

from approvals.api.models import ApiKey
from tests.api.conftest import bearer
from tests.api.streams import opened, receive
from tests.fixtures.processes import web_process
from tests.fixtures.servers import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


async def test_it_streams_what_another_process_decided_and_resumes_on_either(refund, operator_keys):
    ann, bob = operator_keys
    web = [free_port(), free_port()]
    with web_process(web[0]), web_process(web[1]):
        first, second = (httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}", timeout=10) for p in web)
        async with first, second:
            events = await opened(first, ann)
            call = await sync_to_async(receive)(refund, 20)
            pending = await events.next()
            binding = (await second.get(f"/api/v1/calls/{call.pk}", headers=bearer(bob))).json()["binding"]
            decided = await second.post(
                f"/api/v1/calls/{call.pk}/decision", json={"action": "deny", "binding": binding}, headers=bearer(bob)
            )
            heard = await events.next()
            await events.close()
            later = await sync_to_async(receive)(refund, 30)
            resumed = await opened(second, ann, after=heard["id"])
            next_one = await resumed.next()
            await resumed.close()

    assert (pending["event"], pending["data"]["call_id"]) == ("call.pending", call.pk)
    assert decided.status_code == 200
    assert (heard["event"], heard["data"]) == ("call.decided", {"call_id": call.pk, "status": "denied"})
    assert (next_one["event"], next_one["data"]["call_id"]) == ("call.pending", later.pk)
    assert await ApiKey.objects.filter(user__username="bob", last_used_at__isnull=False).aexists()
