"""How fast a bot reading `GET /api/v1/events` learns of a new call, beside the queue page's websocket.

    .venv/bin/python bench/events_latency.py [--calls 200] [--clients 4] [--pause 1] [--setup embedded services]

bench/push_latency.py's run (clients calling `echo` under an ask rule; an operator's websocket
approving each call as its row arrives), with a bot beside the operator: an operator's API key
streaming /api/v1/events from the operator's web process, noting when each `call.pending` arrives.
Per setup it prints arrival → push for the websocket and for the event stream, from the client
sending tools/call and from the console recording the call (Call.received_at). Target: the event
stream's p95 ≤ 50 ms, as the websocket's. Setups as in push_latency.py: under `services` the
clients' web process is not the bot's, so every event crosses Redis.
"""

import asyncio
import json
import os
import sys
import time

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TIMEOUT_SECONDS, BenchError, each_setup, manage, run_as_script
from operators import OPERATOR, prepare_asking
from options import calling_arguments
from push_latency import Timings, measure, run_setup, span_rows

MAKE_KEY = (
    "from django.contrib.auth.models import User; from approvals.api.keys import create_key; "
    f"print(create_key(User.objects.get(username={OPERATOR!r}), 'events bench')[1])"
)


class Bot:
    """A stream of /api/v1/events: when each call.pending arrived, by call id."""

    def __init__(self, base: str, key: str):
        self.http = httpx.AsyncClient(
            base_url=base, timeout=TIMEOUT_SECONDS, headers={"Authorization": f"Bearer {key}"}
        )
        self.pending: dict[int, float] = {}
        self.reading: asyncio.Task | None = None

    async def open(self):
        response = await self.http.send(self.http.build_request("GET", "/api/v1/events"), stream=True)
        if response.status_code != 200:
            raise BenchError(f"the event stream was refused: HTTP {response.status_code}")
        lines = response.aiter_lines()
        # The stream's first line comes once it is following the window: nothing after it is missed.
        await asyncio.wait_for(anext(lines), TIMEOUT_SECONDS)
        self.reading = asyncio.create_task(self.read(lines))

    async def read(self, lines):
        event = ""
        async for line in lines:
            now = time.time()
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == "call.pending":
                self.pending[json.loads(line.removeprefix("data: "))["call_id"]] = now

    async def close(self):
        if self.reading is not None:
            self.reading.cancel()
        await self.http.aclose()


class WithBot:
    """push_latency's measure with a bot streaming events beside the operator; the setup's API key from prepare."""

    def __init__(self):
        self.key, self.streamed = "", {}

    def prepare(self, env: dict, upstream_url: str) -> tuple[str, str]:
        tool, secret = prepare_asking(env, upstream_url)
        self.key = manage(env, "shell", "-c", MAKE_KEY).splitlines()[-1]
        return tool, secret

    async def measure(self, client_base: str, operator_base: str, secret: str, tool: str, args) -> Timings:
        bot = Bot(operator_base, self.key)
        await bot.open()
        try:
            timings = await measure(client_base, operator_base, secret, tool, args)
        finally:
            await bot.close()
        self.streamed = {n: bot.pending[c] for n, c in timings.call_ids.items() if c in bot.pending}
        return timings


def main():
    args = calling_arguments(__doc__)
    lines = [
        f"{args.clients} clients (revision {args.revision}) each calling `echo` under an ask rule, {args.pause:g} s "
        "after its previous answer; the queue's websocket approves each call, a bot streams /api/v1/events",
        "",
        "| setup | pushed to | from when | calls | p50 ms | p95 ms | p99 ms | CPU stolen % | CPU check ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    failed = False
    for name, upstream_url in each_setup(args):
        run = WithBot()
        timings = run_setup(name, upstream_url, args, measure=run.measure, prepare=run.prepare)
        missing = len(timings.pushed) - len(run.streamed)
        if timings.errors or missing:
            print(f"{name}: {timings.errors} calls failed, {missing} never streamed", file=sys.stderr)
            failed = True
        spans = [
            ("websocket", "the client sends tools/call", timings.sent, timings.pushed),
            ("websocket", "the console records the call", timings.received_at, timings.pushed),
            ("GET /api/v1/events", "the client sends tools/call", timings.sent, run.streamed),
            ("GET /api/v1/events", "the console records the call", timings.received_at, run.streamed),
        ]
        lines += span_rows(name, timings, spans, (50, 95, 99), with_calls=True, tail=timings.machine_cells())
    print("\n".join(lines))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    run_as_script(main, "bench")
