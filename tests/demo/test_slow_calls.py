"""export_report takes its time: it reports progress, and it stops when the client cancels it."""

from approvals.demo.reports import STEP_SECONDS
from tests.demo.conftest import both_eras, connect, envelope, tools_call

# An export the cancellation missed reports progress at each of its steps: two steps of quiet say it stopped.
QUIET_SECONDS = 2 * STEP_SECONDS


@both_eras
async def test_it_reports_the_progress_of_an_export_to_the_progress_callback(mode, version):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    async with connect(mode) as client:
        arguments = {"report": "customers", "seconds": 1}
        result = await client.call_tool("export_report", arguments, progress_callback=on_progress)

    assert [(progress, total) for progress, total, _ in seen] == [(1, 2), (2, 2)]
    assert seen[-1][2] == "Exported 20 of 20 rows"
    summary, csv = result.content
    assert summary.text == "The customers report is ready: 20 rows of CSV follow."
    assert csv.text.splitlines()[1].startswith("C001,Ada Lindqvist,ada.lindqvist@example.com,DE,")


async def test_it_answers_ping_while_a_slow_export_runs(raw):
    await raw.initialize()
    await raw.send(tools_call(1, "export_report", {"report": "orders", "seconds": 2}))

    pong = await raw.request(2, "ping")

    assert pong["result"] == {}
    assert "result" in await raw.answer(1, timeout=10)


async def test_it_stops_an_export_the_client_cancels_and_never_answers_it(raw):
    await raw.initialize()
    tracked = {"progressToken": "export-1"}
    await raw.send(tools_call(1, "export_report", {"report": "orders", "seconds": 10}, _meta=tracked))
    first = await raw.receive()
    assert first["method"] == "notifications/progress" and first["params"]["progressToken"] == "export-1"

    await raw.notify("notifications/cancelled", {"requestId": 1, "reason": "changed my mind"})
    await raw.request(2, "ping")

    assert await raw.quiet_for(QUIET_SECONDS) == []
    assert all(message.get("id") != 1 for message in raw.others)


async def test_it_stops_a_2026_export_the_client_cancels(raw):
    export = envelope(name="export_report", arguments={"report": "revenue", "seconds": 10}, _meta={"progressToken": 7})
    await raw.send(tools_call(1, **export))
    assert (await raw.receive())["params"]["progressToken"] == 7

    await raw.notify("notifications/cancelled", {"requestId": 1})
    await raw.request(2, "tools/list", envelope())

    assert await raw.quiet_for(QUIET_SECONDS) == []


async def test_it_withdraws_its_form_when_the_call_waiting_on_it_is_cancelled(raw):
    await raw.initialize(capabilities={"elicitation": {}})
    await raw.send(tools_call(1, "issue_refund", {"order_id": "O1003"}))
    asked = await raw.receive()

    await raw.notify("notifications/cancelled", {"requestId": 1})

    withdrawn = await raw.receive()
    assert withdrawn["method"] == "notifications/cancelled"
    assert withdrawn["params"]["requestId"] == asked["id"]
    assert await raw.quiet_for(0.5) == []
