"""Run some tests again and again, embedded and on the services, optionally beside a CPU load: are they steady?

A race shows once in many runs, and more often on a slow machine. The load is a number of
processes spinning a pure-Python loop at the lowest priority, so that the tests get what is
left of each core as a slower machine would give it, without the bench starving them outright.

    .venv/bin/python bench/repeat_tests.py --runs 20 --load 2 tests/calls/test_cut_short.py

Prints a line per run, then per setup the runs that passed and failed.
"""

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETUPS = {
    "embedded": {"DATABASE_URL": None, "REDIS_URL": None},
    "services": {
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/repeat_bench",
        "REDIS_URL": "redis://127.0.0.1:6379/7",
    },
}


def spin():
    os.nice(19)
    while True:
        pass


@contextmanager
def cpu_load(processes: int):
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(processes)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


def environment(setup: str) -> dict:
    env = dict(os.environ)
    for name, value in SETUPS[setup].items():
        if value is None:
            env.pop(name, None)
        else:
            env.setdefault(name, value)
    return env


def run_once(tests: list[str], setup: str) -> tuple[bool, float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=REPO,
        env=environment(setup),
        capture_output=True,
        text=True,
    )
    summary = (done.stdout.strip().splitlines() or ["(nothing printed)"])[-1]
    return done.returncode == 0, time.monotonic() - started, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="+", help="what pytest runs: files, folders or node ids")
    parser.add_argument("--runs", type=int, default=20, help="runs per setup (default 20)")
    parser.add_argument("--load", type=int, default=0, help="processes spinning beside the tests (default none)")
    parser.add_argument("--setup", nargs="+", choices=SETUPS, default=list(SETUPS), help="default both")
    args = parser.parse_args()

    results = {}
    with cpu_load(args.load):
        for setup in args.setup:
            outcomes = []
            for n in range(1, args.runs + 1):
                passed, seconds, summary = run_once(args.tests, setup)
                outcomes.append(passed)
                print(f"{setup} run {n}: {'passed' if passed else 'FAILED'} in {seconds:.1f}s ({summary})", flush=True)
            results[setup] = outcomes
    print(f"\n{args.runs} runs per setup, {args.load} spinning processes beside them")
    for setup, outcomes in results.items():
        print(f"{setup}: {sum(outcomes)} passed, {len(outcomes) - sum(outcomes)} failed")
    sys.exit(0 if all(all(outcomes) for outcomes in results.values()) else 1)


if __name__ == "__main__":
    main()
