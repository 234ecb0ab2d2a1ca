"""An SSE answer as the server is given it: the stream's opening, what the work emits, keep-alives while it is
quiet, and its last event with the end of the body."""

import asyncio

from approvals.gateway import streams

PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}


async def sent_bodies(respond) -> tuple[dict, list[tuple[bytes, bool]]]:
    sent = []

    async def send(message):
        sent.append(message)

    await streams.EventStream(streams.response_events(respond), lambda: None, {}).send_to(send)
    return sent[0], [(message["body"], message.get("more_body", False)) for message in sent[1:]]


async def test_it_sends_an_answers_last_event_with_the_end_of_its_body(settings):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 0.05

    async def respond(emit):
        await emit(PROGRESS)
        await asyncio.sleep(0.12)
        return ANSWER

    start, bodies = await sent_bodies(respond)

    assert start["type"] == "http.response.start"
    assert bodies[0] == (streams.OPENING + streams.event(PROGRESS), True)
    # Quiet for more than two keep-alive periods: a keep-alive each, until the answer.
    assert bodies[1:-1] == [(streams.KEEP_ALIVE, True)] * 2
    assert bodies[-1] == (streams.event(ANSWER), False)


async def test_it_answers_at_once_what_is_answered_before_the_first_wait():
    async def respond(emit):
        return ANSWER

    _, bodies = await sent_bodies(respond)

    assert bodies == [(streams.OPENING + streams.event(ANSWER), False)]


async def test_it_opens_a_quiet_stream_with_its_comment_alone(settings):
    settings.MCP_SSE_KEEPALIVE_SECONDS = 10

    async def respond(emit):
        await asyncio.sleep(streams.OPENING_WAIT_SECONDS * 3)
        return ANSWER

    _, bodies = await sent_bodies(respond)

    assert bodies == [(streams.OPENING, True), (streams.event(ANSWER), False)]
