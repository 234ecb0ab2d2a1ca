"""The README's configuration table names exactly the environment variables the settings modules read."""

import ast
import re
from pathlib import Path

import pytest

from tests.fixtures.processes import start_console

ROOT = Path(__file__).resolve().parents[1]
# settings.py and the modules it takes its settings from; environment.py defines the helpers the others read with.
SETTINGS = [
    ROOT / "console" / name
    for name in ("environment.py", "settings.py", "limits.py", "identity_settings.py", "slack_settings.py")
]
README = ROOT / "README.md"
ENVIRON_READERS = {"os.environ.get", "os.getenv", "os.environ.setdefault", "os.environ.pop"}


def dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def environment_key(node):
    """The expression naming the variable when `node` reads the environment directly, else None."""
    if isinstance(node, ast.Call) and dotted(node.func) in ENVIRON_READERS and node.args:
        return node.args[0]
    if isinstance(node, ast.Subscript) and dotted(node.value) == "os.environ":
        return node.slice
    if isinstance(node, ast.Compare) and any(dotted(c) == "os.environ" for c in node.comparators):
        return node.left
    return None


def environment_helpers(tree: ast.Module) -> set[str]:
    """The module's functions that read the variable their first parameter names (env_bool, env_list), themselves or
    through another such function (secret, through given_secret)."""
    functions = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.args.args]
    helpers: set[str] = set()
    while True:
        found = {function.name for function in functions if reads_its_first_parameter(function, helpers)}
        if found == helpers:
            return helpers
        helpers = found


def reads_its_first_parameter(function: ast.FunctionDef, helpers: set[str]) -> bool:
    parameter = function.args.args[0].arg
    for node in ast.walk(function):
        key = environment_key(node)
        if key is None and isinstance(node, ast.Call) and dotted(node.func) in helpers and node.args:
            key = node.args[0]
        if isinstance(key, ast.Name) and key.id == parameter:
            return True
    return False


def names_read_from_the_environment(source: str) -> set[str]:
    tree = ast.parse(source)
    helpers = environment_helpers(tree)
    names = set()
    for node in ast.walk(tree):
        key = environment_key(node)
        if key is None and isinstance(node, ast.Call) and dotted(node.func) in helpers and node.args:
            key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            names.add(key.value)
    return names


def names_in_the_configuration_table(readme: str) -> set[str]:
    """The backquoted names in the first column of the table under '## Configuration'."""
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1])}


def test_it_documents_every_setting_read_from_the_environment():
    read = names_read_from_the_environment("\n".join(path.read_text() for path in SETTINGS))
    documented = names_in_the_configuration_table(README.read_text())
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"} <= read, "the settings modules should be read, not found empty"
    assert read - documented == set(), (
        f"read by the settings modules, missing from the README: {sorted(read - documented)}"
    )
    assert documented - read == set(), (
        f"in the README's table, not read by the settings modules: {sorted(documented - read)}"
    )


def test_it_finds_a_variable_however_settings_reads_it():
    source = """
import os

def env_flag(name, default=False):
    return os.environ.get(name, default)

def env_number(key):
    return int(os.environ[key])

A = os.environ.get("A")
B = os.getenv("B", "1")
C = os.environ["C"]
D = env_flag("D")
E = env_number("E")
F = "F" in os.environ
G = os.environ.get(computed_name)
"""
    assert names_read_from_the_environment(source) == {"A", "B", "C", "D", "E", "F"}


def test_it_reads_every_name_of_a_row_and_only_the_first_column():
    readme = """
## Configuration

| variable | default | meaning |
|---|---|---|
| `ONE` | 1 | see `NOT_A_SETTING` |
| `TWO`, `THREE` | 2, 3 | caps |

## Next
| `FOUR` | 4 | outside the section |
"""
    assert names_in_the_configuration_table(readme) == {"ONE", "TWO", "THREE"}


@pytest.mark.parametrize(("reread", "lease"), [("15", "30"), ("60", "30"), ("0", "30")])
def test_it_refuses_to_start_when_held_calls_are_re_read_too_seldom_to_renew_their_leases(reread, lease):
    started = start_console(CALL_REREAD_SECONDS=reread, CALL_LEASE_SECONDS=lease)

    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr and "CALL_REREAD_SECONDS" in started.stderr


def test_it_starts_when_held_calls_are_re_read_often_enough_to_renew_their_leases():
    started = start_console(CALL_REREAD_SECONDS="14", CALL_LEASE_SECONDS="30")

    assert started.returncode == 0, started.stderr
