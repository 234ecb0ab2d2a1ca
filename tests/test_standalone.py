"""The repository stands alone: a clone has nothing beside it, so nothing in it may reach outside."""

import json
import subprocess

import pytest

from tests.fixtures.servers import REPO, node_bin, node_env

# Spelled in pieces so that this file does not name what it looks for.
SIBLING = "shared"
NEEDLES = ("../" + SIBLING, 'parent / "' + SIBLING + '"')

LISTEN_WITHOUT_A_HOST = """
const server = require("node:net").createServer();
server.listen(0);
console.log(JSON.stringify(server.address()));
server.close();
"""


def tracked_files() -> list[str]:
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    return [name for name in listing.stdout.decode().split("\0") if name]


def test_it_names_nothing_outside_the_repository():
    naming = []
    for name in tracked_files():
        path = REPO / name
        if not path.is_file():
            continue
        text = path.read_bytes().decode(errors="replace")
        naming += [f"{name}: {needle}" for needle in NEEDLES if needle in text]
    assert naming == []


@pytest.mark.node
def test_it_keeps_a_node_server_that_names_no_host_on_loopback():
    node = node_bin()
    if node is None:
        pytest.skip("Node.js is not installed; `make node-deps` installs Node 22 into tests/node")
    ran = subprocess.run(
        [node, "-e", LISTEN_WITHOUT_A_HOST],
        env={**node_env(), "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert json.loads(ran.stdout)["address"] == "127.0.0.1"
