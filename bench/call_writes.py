"""What the two writes of an allowed tools/call cost the console's CPU, in one process, without a server.

    .venv/bin/python bench/call_writes.py [--calls 2000] [--batch 10] [--sets 3] [--profile 25]

The writes a call through /mcp makes in its loop's batches (calls/batched_writes.write_together): its
arrival (`lifecycle.receive_call`: the row, the input schema's check, the allow rule, three audit events)
and its result (`ending.record_result`: the row's update, one audit event), `--batch` calls a batch as at
concurrency 10, with the commits and the announcements they hand to the loop. Printed: the process's CPU
per call (getrusage) per set, the audit chain verified afterwards, and the machine's CPU check.
`--profile N` runs the sets under cProfile (its CPU clock) and prints its N costliest functions: its own
cost weighs on every function call, so read shares, not times.

On SQLite unless DATABASE_URL is set: then on that database, which it migrates and fills (use a database of
its own). Either way the console's folder (CONSOLE_VAR_DIR) is a scratch one, removed afterwards.
"""

import argparse
import asyncio
import cProfile
import functools
import os
import pstats
import resource
import shutil
import sys
import tempfile
import time

from machine import cpu_check_ms

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGUMENTS = {"message": "hello, café ☕", "count": 3, "tags": ["a", "b"]}
RESULT = {"content": [{"type": "text", "text": "hello, café ☕"}], "isError": False}
SCHEMA = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "title": "Message"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["message"],
    "title": "echoArguments",
}


def prepared_console():
    """Django set up on a migrated database holding a server, its echo tool, a rule allowing it and a token."""
    sys.path.insert(0, REPO)
    # The writes run on the bench's event loop, where the console runs them in a thread of it.
    os.environ.update(
        DJANGO_SETTINGS_MODULE="console.settings", LOG_LEVEL="WARNING", REDIS_URL="", DJANGO_ALLOW_ASYNC_UNSAFE="1"
    )
    # A folder of the bench's own in every case: the console keeps its audit chain's witness there, which a
    # console's own folder must not take from another database.
    os.environ["CONSOLE_VAR_DIR"] = tempfile.mkdtemp(prefix="call-writes-")
    import django

    django.setup()
    from django.core.management import call_command

    from approvals.catalog.models import Server, Tool
    from approvals.protocol.tools import tool_digest
    from approvals.tokens.credentials import create_token

    call_command("migrate", verbosity=0)
    server = Server.objects.create(name="bench", url="https://bench.example/mcp", tool_prefix="bench_")
    definition = {"name": "echo", "inputSchema": SCHEMA}
    tool = Tool.objects.create(
        server=server,
        upstream_name="echo",
        exposed_name="bench_echo",
        definition=definition,
        digest=tool_digest(definition),
        status=Tool.Status.ACTIVE,
    )
    call_command("add_rule", "--action", "allow", "--server", "bench", "--tool", "bench_echo", "--name", "bench")
    return tool, create_token("bench")[0]


def run(tool, token, calls: int, batch: int) -> float:
    """The process's CPU ms per call over `calls` calls written `batch` at a time, arrival then result."""
    from approvals.calls import batched_writes, ending, lifecycle
    from approvals.calls.models import Call
    from approvals.live import events
    from approvals.protocol import revisions
    from approvals.tokens.context import ClientContext

    ctx = ClientContext(token, revisions.LEGACY, "2025-11-25", streaming=True)

    async def written(works) -> list:
        # As the loop's writer does, less the thread: the batch, then what its commit handed to the loop.
        outcomes, handed = batched_writes.write_gathered(works, asyncio.get_running_loop())
        events.run_gathered(handed)
        await asyncio.sleep(0)
        for _, error in outcomes:
            if error is not None:
                raise error
        return [result for result, _ in outcomes]

    async def every_batch():
        events.SERVING_LOOP.set(asyncio.get_running_loop())
        for first in range(0, calls, batch):
            numbers = range(first, min(first + batch, calls))
            arrived = await written(
                [functools.partial(lifecycle.receive_call, ctx, tool, ARGUMENTS, n, None) for n in numbers]
            )
            await written(
                [functools.partial(ending.record_result, c, Call.Status.COMPLETED, RESULT, "") for c, _ in arrived]
            )

    started = cpu_ms()
    asyncio.run(every_batch())
    return (cpu_ms() - started) / calls


def cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per set (2000)")
    parser.add_argument("--batch", type=int, default=10, help="calls per batch of writes (10)")
    parser.add_argument("--sets", type=int, default=3, help="sets, after one unmeasured warm-up set (3)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile; print the N costliest")
    return parser.parse_args()


def main():
    args = arguments()
    check = cpu_check_ms()
    tool, token = prepared_console()
    from approvals.audit import verify

    try:
        run(tool, token, min(args.calls, 200), args.batch)
        # CPU time, not the wall's: the writes' commits wait on the disk.
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        figures = []
        for _ in range(args.sets):
            if profiler:
                profiler.enable()
            figures.append(run(tool, token, args.calls, args.batch))
            if profiler:
                profiler.disable()
        print("CPU ms per call, per set:", " ".join(f"{figure:.3f}" for figure in figures))
        print(f"mean {sum(figures) / len(figures):.3f}, best {min(figures):.3f}")
        verdict = verify.verify_chain()
        print("audit chain:", "verified" if verdict.ok else verdict.summary(), f"({verdict.checked} events)")
        print(f"CPU check (bench/machine.py): {check:.0f} ms before, {cpu_check_ms():.0f} ms after")
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
    finally:
        # The bench's own, made by prepared_console.
        shutil.rmtree(os.environ["CONSOLE_VAR_DIR"], ignore_errors=True)


if __name__ == "__main__":
    main()
