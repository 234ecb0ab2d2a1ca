"""The services pass leaves out no code that behaves differently on PostgreSQL and Redis: every module that takes
row locks, writes SQL by hand, counts on triggers, or reaches the channel layer, the cache or celery has tests there."""

import ast
import re
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
    assert {"approvals/audit/chain.py", "approvals/calls/claims.py", "approvals/live/events.py"} <= set(modules)
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
