import os
import subprocess

import aiohttp
import pytest

from approvals.upstream.isolation import account, can_switch_users
from tests.upstream.machine import STDIO_USER


@pytest.fixture(scope="module")
def stdio_user() -> str:
    """STDIO_USER, created when this machine lets the tests do so (root)."""
    if not can_switch_users():
        pytest.skip("the tests run unprivileged, so the console cannot start a process as another user")
    if account(STDIO_USER) is None:
        if os.geteuid() != 0:
            pytest.skip(f"there is no user {STDIO_USER!r}, and only root may create it")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin"]
            + [STDIO_USER],
            check=True,
        )
    return STDIO_USER


@pytest.fixture(autouse=True)
def closes_its_http_clients(monkeypatch):
    """Fails a test that leaves an HTTP client of the upstream client unclosed. aiohttp would warn only once it is
    collected ("Unclosed client session"), at any later time or never."""
    made = []
    make = aiohttp.ClientSession.__init__

    def recording(client, *args, **kwargs):
        make(client, *args, **kwargs)
        made.append(client)

    monkeypatch.setattr(aiohttp.ClientSession, "__init__", recording)
    yield
    assert [client for client in made if not client.closed] == []
