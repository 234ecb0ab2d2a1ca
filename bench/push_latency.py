"""How fast operators see a call and clients see a decision: arrival → push, and decision → answer.

    .venv/bin/python bench/push_latency.py [--calls 200] [--clients 4] [--pause 1] [--seconds 90]
                                           [--setup embedded services] [--revision 2025-11-25] [--stages]

Clients fire `echo` calls at the console under an ask rule, each one a second
(--pause) after its previous answer, as agents between two steps of their work. An operator's websocket
(the one the queue page opens) records when each call.pending arrives, and a decider
approves each call over HTTP at once, as the queue's Approve button does, with the
binding read from the pushed row. Per call, in wall-clock time on this one machine:

- arrival → push: until the operator's socket gets call.pending, from the client
  sending tools/call, and from the console recording the call (Call.received_at);
- decision → answer: until the client gets the tool's result, from the decider
  sending its POST, and from the console recording the approval (Call.decided_at).

The bench's own garbage collector is off while it measures (as timeit's is), so that
its pauses are not counted as the console's.

Two columns say how fast the machine was. CPU stolen is the share of its CPU
time that the host gave to other virtual machines during the run (from /proc/stat).
CPU check is how long a fixed pure-Python loop took just before and just after the
run: a guest can be slowed without any steal showing, and then this grows with every
other figure. Compare runs whose two columns agree. The last column is the CPU time the
console's web processes spent per answered call: on two cores a call waits whenever
another call's work holds them, so the p95 follows it; it varies less from run to run
than the p95 does.

With --stages it also prints where the time goes: the p50 and p95 of each step
between two moments the clients, the operator or the console wrote down.

Setups: `embedded` is SQLite in a temporary directory, the in-memory channel layer and
one web process. `services` is PostgreSQL and Redis with two web processes, the
clients on one and the operator's socket and POSTs on the other, so every event crosses
Redis. It uses DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432) with
a database of its own, push_bench_ and the name of DATABASE_URL's database, created and
dropped here, and REDIS_URL (default redis://127.0.0.1:6379/14). The upstream is tests/servers/sdk_server.py over HTTP.
Everything listens on loopback; everything started is stopped.
"""

import asyncio
import json
import os
import random
import re
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (
    TIMEOUT_SECONDS,
    BenchError,
    McpClient,
    Sample,
    console_process,
    each_setup,
    manage,
    run_as_script,
    setup_env,
)
from machine import collector_off, cpu_check_ms, cpu_times, process_cpu_ms, stolen_share
from operators import Operator, prepare_asking
from options import calling_arguments

BENCH_DATABASE = "push_bench"
NONCE = re.compile(r"push-bench (\d+)")
BINDING = re.compile(r'name="binding" value="([0-9a-f]{64})"')
WARMUP = 5


@dataclass
class Timings:
    """Wall-clock times (time.time()) per call number; the console's own come from its database."""

    sent: dict = field(default_factory=dict)
    pushed: dict = field(default_factory=dict)
    decided: dict = field(default_factory=dict)
    answered: dict = field(default_factory=dict)
    call_ids: dict = field(default_factory=dict)
    received_at: dict = field(default_factory=dict)
    decided_at: dict = field(default_factory=dict)
    forwarded_at: dict = field(default_factory=dict)
    answered_at: dict = field(default_factory=dict)
    errors: int = 0
    stolen: float | None = None  # the share of CPU time the host gave to other guests meanwhile, in %
    cpu_check: float = 0.0  # ms for a fixed pure-Python loop, before and after the run (their mean)
    console_cpu: float | None = None  # ms of CPU time the console's web processes used per answered call

    def sample(self, start: dict, end: dict) -> Sample:
        numbers = sorted(n for n in start if start[n] is not None and n in end and n >= WARMUP)
        return Sample("", 0, [end[n] - start[n] for n in numbers])

    def machine_cells(self) -> tuple[str, str]:
        """The CPU stolen % and CPU check ms cells of a table row."""
        return "n/a" if self.stolen is None else f"{self.stolen:.1f}", f"{self.cpu_check:.0f}"

    def add_console_times(self, times: dict):
        for number, call_id in self.call_ids.items():
            received, decided, forwarded, answered = times[str(call_id)]
            self.received_at[number], self.decided_at[number] = received, decided
            self.forwarded_at[number], self.answered_at[number] = forwarded, answered


class Approver(Operator):
    """Approves each call over HTTP as soon as its row arrives, as the queue's Approve button does, noting when."""

    def __init__(self, base: str, timings: Timings):
        super().__init__(base)
        self.timings = timings
        self.decisions: set[asyncio.Task] = set()

    def on_pending(self, message: dict, now: float):
        nonce, binding = NONCE.search(message["html"]), BINDING.search(message["html"])
        if nonce is None or binding is None:
            return
        number = int(nonce.group(1))
        self.timings.pushed[number] = now
        self.timings.call_ids[number] = message["call_id"]
        task = asyncio.create_task(self.approve(number, message["call_id"], binding.group(1)))
        self.decisions.add(task)
        task.add_done_callback(self.decisions.discard)

    async def approve(self, number: int, call_id: int, binding: str):
        data = {"decision": "approve", "binding": binding, "csrfmiddlewaretoken": self.http.cookies["csrftoken"]}
        self.timings.decided[number] = time.time()
        response = await self.http.post(f"/queue/{call_id}/decide/", data=data, headers={"Accept": "application/json"})
        if response.status_code != 200 or response.json().get("level") != "success":
            self.timings.errors += 1


async def client_worker(url: str, args, secret: str, tool: str, numbers, timings: Timings, deadline: float):
    async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as http:
        client = McpClient(http, url, args.revision, secret)
        await client.start()
        # Clients start out of step, as independent agents do.
        await asyncio.sleep(random.uniform(0, args.pause))
        for number in numbers:
            if time.monotonic() > deadline:
                return
            text = f"push-bench {number}"
            timings.sent[number] = time.time()
            try:
                answer = await client.call(tool, {"message": text})
            except (httpx.HTTPError, BenchError) as exc:
                print(f"call {number}: {exc}", file=sys.stderr)
                timings.errors += 1
                continue
            timings.answered[number] = time.time()
            content = (answer.get("result") or {}).get("content") or [{}]
            if content[0].get("text") != text:
                timings.errors += 1
            await asyncio.sleep(args.pause)


async def measure(client_base: str, operator_base: str, secret: str, tool: str, args) -> Timings:
    timings = Timings()
    operator = Approver(operator_base, timings)
    await operator.sign_in()
    await operator.watch()
    try:
        numbers = iter(range(args.calls + WARMUP))
        deadline = time.monotonic() + args.seconds
        await asyncio.gather(
            *(
                client_worker(f"{client_base}/mcp", args, secret, tool, numbers, timings, deadline)
                for _ in range(args.clients)
            )
        )
        if operator.decisions:
            await asyncio.wait(operator.decisions, timeout=TIMEOUT_SECONDS)
    finally:
        await operator.close()
    return timings


def console_cpu_ms(pids: set[int]) -> float | None:
    used = [process_cpu_ms(pid) for pid in pids]
    return None if None in used else sum(used)


def run_setup(name: str, upstream_url: str, args, measure=measure, prepare=prepare_asking) -> Timings:
    """One setup's run; another bench passes its own `measure` (same arguments) and `prepare`."""
    with ExitStack() as stack:
        env = setup_env(stack, name, BENCH_DATABASE)
        tool, secret = prepare(env, upstream_url)
        with ExitStack() as consoles:
            client_base, client_pid = console_process(consoles, env)
            if name == "embedded":
                operator_base, operator_pid = client_base, client_pid
            else:
                operator_base, operator_pid = console_process(consoles, env)
            pids = {client_pid, operator_pid}
            before, check_before, console_before = cpu_times(), cpu_check_ms(), console_cpu_ms(pids)
            with collector_off():
                timings = asyncio.run(measure(client_base, operator_base, secret, tool, args))
            console_after = console_cpu_ms(pids)
            timings.stolen = stolen_share(before, cpu_times())
            timings.cpu_check = (check_before + cpu_check_ms()) / 2
            if console_before is not None and console_after is not None and timings.answered:
                timings.console_cpu = (console_after - console_before) / len(timings.answered)
        timings.add_console_times(console_times(env))
        return timings


CONSOLE_TIMES = (
    "import json; from approvals.calls.models import Call; "
    "stamp = lambda at: at.timestamp() if at else None; "
    "print(json.dumps({c.pk: [stamp(c.received_at), stamp(c.decided_at), stamp(c.forwarded_at), stamp(c.answered_at)] "
    "for c in Call.objects.all()}))"
)


def console_times(env: dict) -> dict:
    """When the console recorded each call, its approval, its forwarding and its answer, read from its database."""
    return json.loads(manage(env, "shell", "-c", CONSOLE_TIMES).splitlines()[-1])


def rows(name: str, timings: Timings) -> list[str]:
    console_cpu = "n/a" if timings.console_cpu is None else f"{timings.console_cpu:.1f}"
    measures = [
        ("arrival → push", "the client sends tools/call", timings.sent, timings.pushed),
        ("arrival → push", "the console records the call", timings.received_at, timings.pushed),
        ("decision → answer", "the operator sends Approve", timings.decided, timings.answered),
        ("decision → answer", "the console records the approval", timings.decided_at, timings.answered),
    ]
    return span_rows(
        name, timings, measures, (50, 95, 99), with_calls=True, tail=(*timings.machine_cells(), console_cpu)
    )


def stage_rows(name: str, timings: Timings) -> list[str]:
    """Where the time goes: each step between two moments one side or the other wrote down."""
    stages = [
        ("the client sends tools/call", "the console records the call", timings.sent, timings.received_at),
        (
            "the console records the call",
            "the operator's socket gets call.pending",
            timings.received_at,
            timings.pushed,
        ),
        ("the operator sends Approve", "the console records the approval", timings.decided, timings.decided_at),
        ("the console records the approval", "it forwards the call upstream", timings.decided_at, timings.forwarded_at),
        ("it forwards the call upstream", "it records the answer", timings.forwarded_at, timings.answered_at),
        ("it records the answer", "the client gets the answer", timings.answered_at, timings.answered),
    ]
    return span_rows(name, timings, stages, (50, 95))


def span_rows(name: str, timings: Timings, spans, percentiles, with_calls=False, tail=()) -> list[str]:
    """A table row per span, given as its labels then the times it began and ended per call: the labels,
    how many calls it covers if asked, the percentiles of its length in ms, and the `tail` cells."""
    lines = []
    for *labels, begun, ended in spans:
        sample = timings.sample(begun, ended)
        counted = [str(sample.calls)] if with_calls else []
        cells = [name, *labels, *counted, *(f"{sample.percentile(p):.1f}" for p in percentiles), *tail]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main():
    stages_flag = (("--stages",), {"action": "store_true", "help": "also print where the time goes, step by step"})
    args = calling_arguments(__doc__, stages_flag)
    lines = [
        f"{args.clients} clients (revision {args.revision}) each calling `echo` under an ask rule, "
        f"{args.pause:g} s after "
        "its previous answer; each call approved over HTTP as soon as its push arrives",
        "",
        "| setup | measure | from when | calls | p50 ms | p95 ms | p99 ms "
        "| CPU stolen % | CPU check ms | console CPU ms per call |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    stages = ["", "| setup | from | to | p50 ms | p95 ms |", "|---|---|---|---:|---:|"]
    failed = False
    for name, upstream_url in each_setup(args):
        timings = run_setup(name, upstream_url, args)
        if timings.errors:
            print(f"{name}: {timings.errors} calls failed", file=sys.stderr)
            failed = True
        lines += rows(name, timings)
        stages += stage_rows(name, timings)
    print("\n".join(lines + (stages if args.stages else [])))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    run_as_script(main, "bench")
