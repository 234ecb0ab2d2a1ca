"""The one client that talks to endpoints: bounded in what it reads and how long it waits."""

import socket
import threading
import time

import pytest

from approvals.upstream.outbound import refused_at
from approvals.webhooks.transport import Transport, WebhookError
from tests.webhooks.receiver import Receiver


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
    answer = Transport(timeout=5, max_response_bytes=64 * 1024, allowed_hosts=["127.0.0.1"]).post(endless, b"{}", {})
    assert answer.status == 200
    assert time.monotonic() - started < 4


def test_it_refuses_a_url_that_is_not_http_before_sending_anything():
    with pytest.raises(WebhookError, match="only http and https"):
        Transport(timeout=1).post("gopher://127.0.0.1:70/", b"{}", {})


@pytest.fixture
def receiver_at():
    made = []

    def make():
        made.append(Receiver())
        return made[-1]

    yield make
    for receiver in made:
        receiver.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",  # the clouds' metadata service
        "http://100.100.100.200/",  # shared address space, another cloud's metadata
        "http://[::1]:9/hook",
        "http://[::ffff:127.0.0.1]:9/hook",
        "http://[fd00:ec2::254]/",
        "http://0.0.0.0:9/hook",
    ],
)
def test_it_refuses_an_endpoint_at_an_address_inside_before_connecting(url):
    with pytest.raises(WebhookError, match="WEBHOOK_ALLOWED_HOSTS"):
        Transport(timeout=2).post(url, b"{}", {})


def test_it_delivers_to_a_loopback_endpoint_once_its_address_or_network_is_allowed(receiver_at):
    receiver = receiver_at()
    for allowed_hosts in (["127.0.0.1"], ["127.0.0.0/8"]):
        assert Transport(timeout=5, allowed_hosts=allowed_hosts).post(receiver.url, b"{}", {}).status == 204
    assert len(receiver.received(2)) == 2


def test_it_connects_to_the_address_it_checked_and_names_the_host_it_was_given(receiver_at, monkeypatch):
    receiver = receiver_at()
    port = receiver.server.server_address[1]
    answers = iter(["127.0.0.1", "10.9.9.9"])  # a name that rebinds between a check and a connection

    def rebinding(host, port, *args, **kwargs):
        assert host == "hooks.example"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    transport = Transport(timeout=5, allowed_hosts=["hooks.example"])
    assert transport.post(f"http://hooks.example:{port}/hook", b"{}", {}).status == 204
    [(headers, _)] = receiver.received(1)
    assert headers["host"] == f"hooks.example:{port}"


def test_it_refuses_a_name_when_any_of_its_addresses_is_inside(monkeypatch):
    def mixed(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ("93.184.215.14", "127.0.0.1")]

    monkeypatch.setattr(socket, "getaddrinfo", mixed)
    with pytest.raises(WebhookError, match="resolves to 127.0.0.1"):
        Transport(timeout=2).post("http://hooks.example/hook", b"{}", {})


@pytest.fixture
def trickling():
    """An endpoint on 127.0.0.1 that sends its answer's head a byte at a time, each well within any read timeout."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        try:
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 1000:
                if stop.wait(0.2):
                    break
                connection.sendall(bytes([byte]))
        except OSError:
            pass
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    stop.set()
    listener.close()


def test_it_gives_up_on_an_attempt_at_its_one_deadline_however_the_endpoint_trickles(trickling):
    started = time.monotonic()
    with pytest.raises(WebhookError, match="no answer within 1 seconds"):
        Transport(timeout=1, allowed_hosts=["127.0.0.1"]).post(trickling, b"{}", {})
    assert time.monotonic() - started < 3


def test_it_leaves_to_delivery_a_host_that_does_not_resolve_at_save():
    assert refused_at("https://hooks.invalid/x", [], "WEBHOOK_ALLOWED_HOSTS", timeout=2) == ""


def test_it_names_the_refused_address_and_the_setting_at_save():
    refused = refused_at("http://localhost:9/x", [], "WEBHOOK_ALLOWED_HOSTS", timeout=2)
    assert "resolves to" in refused and "loopback" in refused and "WEBHOOK_ALLOWED_HOSTS" in refused
    assert refused_at("http://localhost:9/x", ["localhost"], "WEBHOOK_ALLOWED_HOSTS", timeout=2) == ""
