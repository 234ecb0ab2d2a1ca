"""A test that hangs fails at its time limit and shows what it waited on: every thread, and every asyncio task."""

import time

from tests.fixtures.servers import REPO

HANGING = """
import asyncio
import time


async def wait_for_a_signal_nobody_sends():
    await asyncio.Event().wait()


async def test_it_awaits_forever():
    await wait_for_a_signal_nobody_sends()


def test_it_sleeps_too_long():
    time.sleep(60)
"""


def test_it_fails_a_hanging_test_with_the_stacks_of_its_threads_and_tasks(pytester, monkeypatch):
    pytester.makepyfile(test_hanging=HANGING)
    # The run of its own loads the suite's plugin from this checkout, and leaves Django out.
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    started = time.monotonic()

    result = pytester.runpytest_subprocess(
        "-p", "tests.fixtures.time_limits", "-p", "no:django", "-o", "asyncio_mode=auto", "--timeout=2", timeout=60
    )

    assert time.monotonic() - started < 30
    result.assert_outcomes(failed=2)
    # The failures themselves, not the summary, which repeats them in full when CI is set.
    failures = result.stdout.str().partition("short test summary info")[0]
    assert failures.count("Timeout: the test took more than 2s") == 2
    # The async test: its task's chain of awaits, down to the coroutine it waited in and the line there.
    result.stdout.fnmatch_lines(
        [
            "*---- task * in the loop of thread MainThread",
            "*test_hanging.py*, in test_it_awaits_forever",
            "*test_hanging.py*, in wait_for_a_signal_nobody_sends",
            "*await asyncio.Event().wait()",
            "*in wait",
        ]
    )
    # The sync test: the thread's stack, down to its sleep.
    result.stdout.fnmatch_lines(["*---- thread MainThread", "*in test_it_sleeps_too_long", "*time.sleep(60)"])
