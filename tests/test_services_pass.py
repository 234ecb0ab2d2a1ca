"""The services pass leaves out no code that behaves differently on PostgreSQL and Redis: every module that takes
row locks, writes SQL by hand, counts on triggers, or reaches the channel layer, the cache or celery has tests there."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.services_pass import EXERCISED_BY, SERVICE_TESTS

ROOT = Path(__file__).resolve().parents[1]
# What in a module's code (its comments and docstrings aside) makes it behave differently on the services.
SERVICE_SENSITIVE = re.compile(
    r"select_for_update|\.cursor\(|\.raw\(|RawSQL|TRIGGER|session_replication_role|channel_layer|caches\b"
    r"|django\.core\.cache|\bcelery\b|\.delay\(|\.apply_async\(|shared_task"
)
MARKERS = re.compile(r"mark\.(postgres|redis|services)\b")


def code_of(path: Path) -> str:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def sensitive_modules() -> list[str]:
    paths = [*ROOT.joinpath("approvals").rglob("*.py"), *ROOT.joinpath("console").rglob("*.py")]
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in paths
        if "migrations" not in path.parts and SERVICE_SENSITIVE.search(code_of(path))
    )


def dotted(module: str) -> str:
    return module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported_by(test: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(test.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def services_tests() -> list[Path]:
    """The test modules the services pass runs, whole or in part."""
    tests = ROOT / "tests"
    return [path for path in tests.rglob("test_*.py") if path.relative_to(ROOT).as_posix() in SERVICE_TESTS] + [
        path for path in tests.rglob("test_*.py") if MARKERS.search(path.read_text())
    ]


def test_it_runs_tests_of_every_module_that_behaves_differently_on_the_services():
    modules = sensitive_modules()
    # The scan still sees the code it is about: were its patterns to miss, it would pass on nothing.
    assert {"approvals/audit/chain.py", "approvals/calls/taking.py", "approvals/live/events.py"} <= set(modules)
    tests = services_tests()
    reached = set().union(*(imported_by(path) for path in tests))
    named = {path.relative_to(ROOT).as_posix() for path in tests}
    untested = [module for module in modules if dotted(module) not in reached and EXERCISED_BY.get(module) not in named]
    assert untested == [], (
        "modules that behave differently on PostgreSQL or Redis with no test in the services pass: mark tests that"
        " import them @pytest.mark.services, or name their test module in tests/services_pass.py"
    )


def test_it_names_only_test_modules_that_exist():
    assert [name for name in [*SERVICE_TESTS, *EXERCISED_BY.values()] if not (ROOT / name).is_file()] == []


# Modules with tests of every kind: plain, on the database, marked services (whole, and once=True), PostgreSQL-only,
# Redis-only and SQLite-only ones.
MIXED = [
    "tests/audit/test_report.py",
    "tests/audit/test_chain.py",
    "tests/pages/test_hostile_inputs.py",
    "tests/catalog/test_credentials_at_rest.py",
    "tests/topology/test_cache.py",
    "tests/calls/test_held_cost.py",
]


# What each pass's environment sets of those the suite's conftest reads when it selects a pass's tests. Collecting
# connects to neither service: the URLs only say which pass this is.
PASSES = {
    "embedded": {"SERVICES_PASS_FOLLOWS": "1"},
    "services": {"DATABASE_URL": "postgres://nobody@127.0.0.1:9/none", "REDIS_URL": "redis://127.0.0.1:9/15"},
}
# One process collects for both passes, each in its environment: a second process would start Django, pytest and
# the modules again for the same tests.
COLLECT = """
import json, os, sys
import pytest
for name, environment in json.loads(sys.argv[1]).items():
    for key in ("SERVICES_PASS_FOLLOWS", "DATABASE_URL", "REDIS_URL"):
        os.environ.pop(key, None)
    os.environ.update(environment)
    print("== " + name, flush=True)
    pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[2:]])
"""


def collected() -> tuple[dict[str, set[str]], int]:
    """The tests each pass of `make test` runs of MIXED, and how many MIXED has in all."""
    done = subprocess.run(
        [sys.executable, "-c", COLLECT, json.dumps(PASSES), *MIXED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outputs = dict(re.findall(r"^== (\w+)\n(.*?)(?=^== |\Z)", done.stdout, re.MULTILINE | re.DOTALL))
    assert outputs.keys() == PASSES.keys(), done.stdout + done.stderr
    totals = {int(total) for total in re.findall(r"(?:\d+/)?(\d+) tests? collected", done.stdout)}
    assert len(totals) == 1, done.stdout + done.stderr
    tests = {name: {line for line in output.splitlines() if "::" in line} for name, output in outputs.items()}
    return tests, totals.pop()


def test_it_runs_every_test_in_one_pass_or_the_other_and_only_marked_ones_twice():
    tests, total = collected()
    embedded, services = tests["embedded"], tests["services"]
    assert len(embedded | services) == total
    assert any("test_hostile_inputs" in test for test in services - embedded)
    assert not any("test_report.py" in test for test in services)
    assert any("test_chain.py" in test for test in embedded & services)
