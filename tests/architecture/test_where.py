"""docs/architecture.md's "Where does X happen" index names only files and packages that exist."""

import re

from tests.architecture.test_map import ROOT


def index_paths(doc: str) -> list[str]:
    """Every path the index names, in the order it names them."""
    section = doc.split("## Where does X happen", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"`((?:approvals|console)/[^`\s]*)`", section)


def missing(paths: list[str]) -> list[str]:
    return [path for path in paths if not (ROOT / path).exists() or path.endswith("/") != (ROOT / path).is_dir()]


def test_it_names_only_paths_that_exist():
    paths = index_paths((ROOT / "docs" / "architecture.md").read_text())
    assert len(paths) >= 12
    assert missing(paths) == []


def test_it_would_find_a_path_that_is_not_there():
    doc = "## Where does X happen\n| a call's expiry | `approvals/calls/nowhere.py` |\n| OAuth | `approvals/oauth/` |\n"
    paths = index_paths(doc)
    assert paths == ["approvals/calls/nowhere.py", "approvals/oauth/"]
    assert missing(paths) == ["approvals/calls/nowhere.py"]
    assert missing(["approvals/oauth"]) == ["approvals/oauth"], "a package is named with its slash"
