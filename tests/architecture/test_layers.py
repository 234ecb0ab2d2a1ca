"""The layers of docs/architecture.md are a contract `make lint` checks (lint-imports, pyproject.toml):
kept by the tree as it is, broken by any import that runs up a layer or closes a circle."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    # lint-imports puts its working directory first on the path, so it reads the tree there.
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the packages and their contracts, which a test may add a module to."""
    copy = tmp_path_factory.mktemp("tree")
    for package in ("approvals", "console"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


@pytest.fixture
def adding(tree):
    """Write modules into the copy for one test, and take them out after it."""
    added = []

    def add(path: str, source: str):
        module = tree / path
        module.write_text(source)
        added.append(module)

    yield add
    for module in added:
        module.unlink(missing_ok=True)


def test_it_keeps_every_contract_on_the_tree_as_it_is(tree):
    found = lint_imports(tree)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "Contracts: 3 kept, 0 broken." in found.stdout


@pytest.mark.parametrize(
    "module, source, told",
    [
        pytest.param(
            "approvals/calls/leak.py",
            "from approvals.actions import servers\n",
            "approvals.calls is not allowed to import approvals.actions",
            id="a domain package imports the actions above it",
        ),
        pytest.param(
            "approvals/live/fan_out.py",
            "from approvals.webhooks import announce\n",
            "approvals.live is not allowed to import approvals.webhooks",
            id="the live events import the domain",
        ),
        pytest.param(
            "approvals/tokens/counting.py",
            "from approvals.calls.models import Call\n",
            "approvals.tokens is not allowed to import approvals.calls",
            id="a domain package imports one after it in the domain order",
        ),
        pytest.param(
            "approvals/db/settings_reader.py",
            "import console.settings\n",
            "approvals.db.settings_reader -> console.settings",
            id="approvals imports the project around it",
        ),
    ],
)
def test_it_fails_on_an_import_that_runs_up_a_layer(tree, adding, module, source, told):
    adding(module, source)
    found = lint_imports(tree)
    assert found.returncode == 1
    assert told in found.stdout


def test_it_fails_on_a_circle_between_the_modules_of_one_package(tree, adding):
    adding("approvals/calls/first.py", "from approvals.calls import second\n")
    adding("approvals/calls/second.py", "from approvals.calls import first\n")
    found = lint_imports(tree)
    assert found.returncode == 1
    assert "No cycles are allowed in approvals.calls." in found.stdout


def test_it_fails_on_a_package_no_layer_names(tree, adding):
    (tree / "approvals" / "stray").mkdir()
    adding("approvals/stray/__init__.py", "")
    try:
        found = lint_imports(tree)
    finally:
        shutil.rmtree(tree / "approvals" / "stray")
    assert found.returncode == 1
    assert "approvals.stray" in found.stdout
