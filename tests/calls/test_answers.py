from approvals.calls.upstream_call import severe_enough, without_envelope


def test_it_answers_in_its_own_name_not_the_upstreams():
    upstream = {
        "content": [{"type": "text", "text": "hi"}],
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "secret-upstream"}, "vendor/trace": "t1"},
    }
    assert without_envelope(upstream) == {"content": [{"type": "text", "text": "hi"}], "_meta": {"vendor/trace": "t1"}}
    assert "_meta" not in without_envelope({"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {}}})


def test_it_relays_log_messages_at_or_above_the_clients_level():
    assert severe_enough("error", "warning")
    assert severe_enough("warning", "warning")
    assert not severe_enough("info", "warning")
    assert severe_enough("debug", None)
    assert severe_enough("made-up", "error")
