"""docs/architecture.md names every module of approvals/ and console/ in its map, under its own package."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def map_entries() -> dict[str, str]:
    """The map's text under each top directory and package ("approvals/calls/"), and each loose module."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    block = doc.split("## Where things are", 1)[1].split("```", 2)[1]
    entries, top, current = {}, "", ""
    for line in filter(None, block.splitlines()):
        if re.match(r"^\S+/$", line):
            top = current = line
            entries[current] = ""
        elif found := re.match(r"^  (\S+/)\s", line + " "):
            current = top + found.group(1)
            entries[current] = line
        elif line.startswith("  ") and not line.startswith("   "):
            current = top
            entries[top] += " " + line
        else:
            entries[current] += " " + line
    return entries


def named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


def test_it_names_every_module_of_approvals_and_console_under_its_package():
    entries = map_entries()
    missing = []
    for path in sorted([*ROOT.joinpath("approvals").rglob("*.py"), *ROOT.joinpath("console").rglob("*.py")]):
        parts = path.relative_to(ROOT).parts
        if path.name == "__init__.py":
            continue  # a package is named by its entry
        if len(parts) == 2:  # approvals/models.py, console/asgi.py: a line of their top directory
            found = named(path.name, entries.get(parts[0] + "/", ""))
        else:
            found = named(path.stem, entries.get(f"{parts[0]}/{parts[1]}/", ""))
        if not found:
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []


def test_it_would_find_a_module_the_map_leaves_out():
    entries = map_entries()
    assert named("ending", entries["approvals/calls/"])
    assert not named("nowhere", entries["approvals/calls/"])
    assert named("settings.py", entries["console/"])
