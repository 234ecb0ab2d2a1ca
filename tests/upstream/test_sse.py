"""The event-stream parser: the WHATWG rules, on bytes split anywhere."""

import pytest

from approvals.upstream.sse import Event, SseError, SseParser


def parse(*chunks: bytes, limit=1024) -> tuple[list[Event], SseParser]:
    parser = SseParser(limit)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events, parser


def test_it_joins_multi_line_data_with_newlines():
    events, _ = parse(b'data: {"a":\ndata: 1}\n\n')
    assert events == [Event('{"a":\n1}')]


def test_it_ignores_comment_lines_such_as_keep_alives():
    events, _ = parse(b": keep-alive\n\n:\ndata: x\n\n")
    assert [e.data for e in events] == ["x"]


def test_it_remembers_ids_and_retry_and_stamps_each_event_with_the_last_id():
    events, parser = parse(b"id: 7\nretry: 2500\ndata: a\n\ndata: b\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "7"), ("b", "7")]
    assert parser.retry_ms == 2500


def test_it_records_the_id_of_a_priming_event_that_has_no_data():
    events, parser = parse(b"id: prime-1\n\n")
    assert events == [] and parser.last_event_id == "prime-1"


def test_it_ignores_a_retry_that_is_not_all_digits_and_an_id_with_nul():
    _, parser = parse(b"retry: 10s\nid: a\x00b\ndata: x\n\n")
    assert parser.retry_ms is None and parser.last_event_id is None


def test_it_accepts_cr_lf_and_crlf_line_ends_even_split_across_chunks():
    events, _ = parse(b"data: one\r", b"\n\r", b"\ndata: two\r\rdata: three\n\n")
    assert [e.data for e in events] == ["one", "two", "three"]


def test_it_handles_a_utf8_character_split_across_chunks_and_a_leading_bom():
    encoded = "\ufeffdata: snö\n\n".encode()
    events, _ = parse(*(encoded[i : i + 1] for i in range(len(encoded))))
    assert [e.data for e in events] == ["snö"]


def test_it_keeps_the_event_type_and_strips_only_one_space_after_the_colon():
    events, _ = parse(b"event: ping\ndata:  two spaces\ndata:none\n\n")
    assert events == [Event(" two spaces\nnone", "ping")]


def test_it_does_not_dispatch_an_event_the_stream_did_not_finish():
    events, _ = parse(b"data: cut off")
    assert events == []


def test_it_refuses_an_event_larger_than_its_bound():
    with pytest.raises(SseError):
        parse(b"data: " + b"x" * 600 + b"\n" + b"data: " + b"y" * 600 + b"\n", limit=1000)
    with pytest.raises(SseError):
        parse(b"data: " + b"x" * 2000, limit=1000)
