"""Django's handler for /mcp: no thread per request for its signals, the same answers, the request's thread closed."""

import threading

import pytest
from django.core import signals

from approvals.gateway import endpoint
from approvals.protocol.jsonrpc import INTERNAL_ERROR
from tests.fixtures.waiting import wait_until


class Signalled:
    """The threads request_started and request_finished were sent in, while connected."""

    def __init__(self):
        self.started: list[str] = []
        self.finished: list[str] = []

    def on_started(self, **kwargs):
        self.started.append(threading.current_thread().name)

    def on_finished(self, **kwargs):
        self.finished.append(threading.current_thread().name)


@pytest.fixture
def signalled():
    seen = Signalled()
    signals.request_started.connect(seen.on_started)
    signals.request_finished.connect(seen.on_finished)
    yield seen
    signals.request_started.disconnect(seen.on_started)
    signals.request_finished.disconnect(seen.on_finished)


def test_it_sends_no_signal_for_a_request_that_ran_nothing_in_a_thread_of_its_own(raw, signalled):
    session_id = raw.initialize()
    # The initialize's thread is closed once its answer is sent: after the client has it.
    wait_until(lambda: signalled.finished, message="the initialize's request_finished")
    signalled.finished.clear()
    answer = raw.legacy(session_id, "ping")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert signalled.started == []
    assert signalled.finished == []


def test_it_closes_the_thread_a_request_started_with_request_finished_sent_there(raw, signalled):
    raw.initialize()
    # initialize opens the session in the request's own thread: Django's receivers close that thread's connection.
    wait_until(lambda: signalled.finished, message="the initialize's request_finished")
    assert signalled.started == []
    assert len(signalled.finished) == 1
    assert signalled.finished[0] != threading.main_thread().name
    assert not signalled.finished[0].startswith("asyncio_")


def test_it_answers_a_failing_view_with_a_json_rpc_error(raw, monkeypatch):
    async def broken(request):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(endpoint, "serve", broken)
    answer = raw.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]["code"] == INTERNAL_ERROR
