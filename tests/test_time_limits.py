"""A test that hangs fails at its time limit and shows what it waited on: every thread, and every asyncio task."""

import time

import pytest

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


# What a request's lazy user is to a report in an event loop: any question put to it raises.
HOSTILE = """
import asyncio


class Hostile:
    def __init__(self):
        object.__setattr__(self, "waiting", asyncio.get_running_loop().create_future().__await__())

    def __getattribute__(self, name):
        raise RuntimeError("evaluated where it may not be")

    def __repr__(self):
        raise RuntimeError("evaluated where it may not be")

    def __await__(self):
        return self

    def __iter__(self):
        return self

    def __next__(self):
        return next(object.__getattribute__(self, "waiting"))


async def test_it_awaits_something_that_refuses_every_question():
    await Hostile()
"""


# pytest's reports of a quick test's phases take longer than its limit: as a busy worker's may.
SLOW_REPORT = """
import time


def pytest_runtest_logreport(report):
    if report.when == "call":
        time.sleep(1.5)
"""


# Each inner test hangs until this limit: time enough for its setup to reach the test's body on a loaded machine.
TIME_LIMIT_SECONDS = 1


def run_with_the_plugin(pytester, monkeypatch):
    # The run of its own loads the suite's plugin from this checkout, and leaves Django out.
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    plugin = ("-p", "tests.fixtures.time_limits", "-p", "no:django", "-o", "asyncio_mode=auto")
    return pytester.runpytest_subprocess(*plugin, f"--timeout={TIME_LIMIT_SECONDS}", timeout=60)


def test_it_fails_a_hanging_test_with_the_stacks_of_its_threads_and_tasks(pytester, monkeypatch):
    pytester.makepyfile(test_hanging=HANGING)
    started = time.monotonic()

    result = run_with_the_plugin(pytester, monkeypatch)

    assert time.monotonic() - started < 30
    result.assert_outcomes(failed=2)
    # The failures themselves, not the summary, which repeats them in full when CI is set.
    failures = result.stdout.str().partition("short test summary info")[0]
    assert failures.count(f"Timeout: the test took more than {TIME_LIMIT_SECONDS}s") == 2
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


def test_it_reports_a_timeout_whatever_the_test_holds(pytester, monkeypatch):
    pytester.makepyfile(test_hostile=HOSTILE)

    result = run_with_the_plugin(pytester, monkeypatch)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*Timeout: the test took more than {TIME_LIMIT_SECONDS}s",
            "*---- task * in the loop of thread MainThread",
            "*test_hostile.py*, in test_it_awaits_something_that_refuses_every_question",
            "*awaiting a test_hostile.Hostile",
        ]
    )
    # The test's own teardown may still trip over it as it cancels the task; the report never did.
    report = result.stdout.str().partition("Timeout: the test took")[2].partition("Captured log teardown")[0]
    assert "evaluated where it may not be" not in report and "not shown" not in report


def test_it_fails_the_next_phase_when_the_time_runs_out_between_phases(pytester, monkeypatch):
    pytester.makeconftest(SLOW_REPORT)
    # A fixture of the module: torn down all the same before the next test, which runs as any other.
    pytester.makepyfile(
        test_quick="""
import pytest


@pytest.fixture(scope="module")
def shared():
    yield


def test_it_is_quick(shared):
    pass


def test_it_comes_next(shared):
    pass
"""
    )

    result = run_with_the_plugin(pytester, monkeypatch)

    # Not an internal error of the whole run, which would end a worker of xdist and the tests it had yet to run.
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_it_is_quick*", "*Timeout: the test took more than 1s"])


BROKEN_REPORT = """
def pytest_runtest_logreport(report):
    if report.when == "call":
        raise RuntimeError("the report could not be sent")
"""


def test_it_repeats_an_internal_error_at_the_end_of_the_run(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makeconftest(BROKEN_REPORT)
    pytester.makepyfile(test_quick="def test_it_is_quick():\n    pass\n")

    result = pytester.runpytest_subprocess("-p", "tests.fixtures.internal_errors", "-p", "no:django", timeout=60)

    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    # Where it happened, then again after the run's summary began, in the last lines a log's tail shows.
    repeated = output.index("1 internal error(s) of this run")
    assert output.index("INTERNALERROR>") < repeated < output.index("the report could not be sent", repeated)
