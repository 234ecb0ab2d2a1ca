"""The one client that talks to endpoints: bounded in what it reads and how long it waits."""

import socket
import threading
import time

import pytest

from approvals.webhooks.transport import Transport, WebhookError


@pytest.fixture
def endless():
    """An endpoint on 127.0.0.1 that answers 200 and then sends a body that never ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
        try:
            while not stop.is_set():
                connection.sendall(b"x" * 8192)
        except OSError:
            pass
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    stop.set()
    listener.close()


def test_it_stops_reading_an_answer_that_never_ends(endless):
    started = time.monotonic()
    answer = Transport(timeout=5, max_response_bytes=64 * 1024).post(endless, b"{}", {})
    assert answer.status == 200
    assert time.monotonic() - started < 4


def test_it_refuses_a_url_that_is_not_http_before_sending_anything():
    with pytest.raises(WebhookError, match="only http and https"):
        Transport(timeout=1).post("gopher://127.0.0.1:70/", b"{}", {})
