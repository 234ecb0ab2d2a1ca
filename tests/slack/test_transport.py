"""Every way a Web API call fails is one SlackError, with Slack's own code when it gave one."""

import socket
import threading

import pytest

from approvals.slack import transport
from tests.slack.fake_slack import TOKEN, FakeSlack


@pytest.fixture
def fake(settings):
    made = FakeSlack()
    settings.SLACK_BOT_TOKEN, settings.SLACK_API_URL, settings.SLACK_TIMEOUT_SECONDS = TOKEN, made.url, 5
    yield made
    made.close()


def test_it_answers_what_slack_answers(fake):
    answer = transport.call("chat.postMessage", {"channel": "#a", "text": "t", "blocks": [{"type": "divider"}]})
    assert answer["ok"] is True and answer["ts"]


@pytest.mark.parametrize(
    ("method", "fields", "token", "error"),
    [
        pytest.param("chat.postMessage", {"channel": "#a", "text": "t"}, TOKEN, "missing_blocks", id="missing"),
        pytest.param("chat.update", {"channel": "C1", "text": "t", "blocks": [1]}, TOKEN, "missing_ts", id="no-ts"),
        pytest.param("chat.postMessage", {"channel": "#a"}, "xoxb-other", "invalid_auth", id="token"),
    ],
)
def test_it_raises_slacks_refusal_with_its_code(fake, settings, method, fields, token, error):
    settings.SLACK_BOT_TOKEN = token
    with pytest.raises(transport.SlackError) as refused:
        transport.call(method, fields)
    assert refused.value.error == error and error in refused.value.message


def test_it_raises_on_an_answer_that_is_not_a_2xx(fake):
    with pytest.raises(transport.SlackError, match="answered 404"):
        transport.call("no.such", {})


def test_it_raises_when_nothing_answers(settings):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    settings.SLACK_API_URL, settings.SLACK_BOT_TOKEN = f"http://127.0.0.1:{port}/api", TOKEN
    with pytest.raises(transport.SlackError, match="chat.postMessage: ConnectError"):
        transport.call("chat.postMessage", {})


def test_it_raises_when_the_answer_is_not_json(settings):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        settings.SLACK_API_URL = f"http://127.0.0.1:{listening.getsockname()[1]}/api"
        settings.SLACK_BOT_TOKEN = TOKEN

        def answer():
            connection, _ = listening.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")

        threading.Thread(target=answer, daemon=True).start()
        with pytest.raises(transport.SlackError, match="not JSON"):
            transport.call("chat.postMessage", {})
