"""A make-believe support agent that calls the demo server's tools through the console.

It speaks MCP with the official SDK client, as any agent would, and knows nothing
of Django: the demo_agent command gives it a URL, a token and the tools' exposed
names. Calls overlap, like an agent's do, so one call waiting for an operator
never stops the stream; a cap on calls in flight keeps the queue readable.
"""

import asyncio
import itertools
import json
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

CUSTOMERS = [f"C{n:03d}" for n in range(1, 21)]
ORDERS = [f"O{n}" for n in range(1001, 1042)]
EMAILS = ["ada.lindqvist@example.com", "liam.oconnor@example.com", "sofia.navarro@example.com"]
# Connections and writes are quick; an answer may wait for an operator for minutes, with keep-alives between.
TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@dataclass(frozen=True)
class Step:
    tool: str
    arguments: Callable[[random.Random], dict]


# Reads first (allowed by rule), then what an operator must see: a quote, a chart,
# a deletion (denied by rule), a slow export with progress, a refund that asks for its details.
SCENARIO = [
    Step("lookup_customer", lambda r: {"customer_id": r.choice(CUSTOMERS)}),
    Step("search_orders", lambda r: {"status": r.choice(["paid", "shipped", "delivered"]), "limit": 5}),
    Step("quote_order", lambda r: {"order_id": r.choice(ORDERS)}),
    Step("delete_record", lambda r: {"record_type": "order", "record_id": r.choice(ORDERS)}),
    Step("lookup_customer", lambda r: {"email": r.choice(EMAILS)}),
    Step("export_report", lambda r: {"report": r.choice(["orders", "customers", "revenue"]), "seconds": 8}),
    Step("search_orders", lambda r: {"customer_id": r.choice(CUSTOMERS), "limit": 3}),
    Step("render_chart", lambda r: {"metric": r.choice(["orders", "revenue"]), "year": r.choice([2025, 2026])}),
    # Once approved, the refund asks an operator for the amount and reason in a form in the queue.
    Step("issue_refund", lambda r: {"order_id": r.choice(ORDERS)}),
]


def summary(result) -> str:
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    line = " ".join((texts[0] if texts else f"{len(result.content)} content blocks").split())
    return line if len(line) <= 110 else line[:109] + "…"


async def drain(running: set, stopped: asyncio.Future, keep: int) -> set:
    """Wait until at most `keep` calls are unanswered, or Ctrl-C; the calls still running."""
    while len(running) > keep and not stopped.done():
        await asyncio.wait(running | {stopped}, return_when=asyncio.FIRST_COMPLETED)
        running = {task for task in running if not task.done()}
    return running


class Agent:
    def __init__(self, url: str, secret: str, names: dict[str, str], say: Callable[[str], None], seed=None):
        self.url, self.secret, self.names, self.say = url, secret, names, say
        self.random = random.Random(seed)

    async def run(self, pace: float, count: int, in_flight: int):
        """Send `count` calls (0: until Ctrl-C), one every `pace` seconds; Ctrl-C cancels those still waiting."""
        stop = asyncio.Event()
        # The SDK's task groups would swallow the cancellation asyncio.run sends on Ctrl-C.
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
        stopped = asyncio.ensure_future(stop.wait())
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.secret}"}, timeout=TIMEOUT)
        async with http, Client(streamable_http_client(self.url, http_client=http)) as client:
            running: set[asyncio.Task] = set()
            steps = itertools.cycle(SCENARIO)
            for number in itertools.count(1):
                if (count and number > count) or stop.is_set():
                    break
                running.add(asyncio.create_task(self.call(client, number, next(steps))))
                await asyncio.wait({stopped}, timeout=pace)
                running = await drain(running, stopped, in_flight - 1)
            for task in await drain(running, stopped, 0):
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
        stopped.cancel()
        return stop.is_set()

    async def call(self, client, number: int, step: Step):
        name, arguments = self.names[step.tool], step.arguments(self.random)
        self.say(f"-> #{number} {name} {json.dumps(arguments)}")

        async def progress(done, total, message):
            self.say(f"   #{number} {name}: {message or 'working'}" + (f" ({done:g}/{total:g})" if total else ""))

        try:
            result = await client.call_tool(name, arguments, progress_callback=progress)
        except Exception as exc:  # one failed call must not stop the stream
            self.say(f"<- #{number} {name} failed: {exc}")
            return
        outcome = "error" if result.is_error else "ok"
        self.say(f"<- #{number} {name} {outcome}: {summary(result)}")
