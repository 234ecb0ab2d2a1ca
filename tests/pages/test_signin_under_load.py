"""Sign-in throttling that holds under load: a burst of simultaneous guesses, and a flood of made-up bearer tokens."""

import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.signin import throttle
from approvals.tokens.credentials import create_token
from tests.fixtures.gateway import modern_envelope
from tests.fixtures.people import PASSWORD, make_user

BURST = 20
LOOPBACK = "127.0.0.1"  # where the live console's requests come from
NAMES = ["ada", *(f"guess{n}" for n in range(3))]
REFUSED = "Too many failed sign-ins for this username or from this address."


@pytest.fixture(autouse=True)
def limits(settings):
    settings.SIGNIN_FAILURES_PER_USERNAME = 5
    settings.SIGNIN_FAILURES_PER_ADDRESS = 100
    settings.SIGNIN_LOCKOUT_SECONDS = 600
    yield
    # The counters outlive each test's database; a whole-cache clear would flush the shared Redis database.
    stems = {stem for name in NAMES for _, stem, _ in throttle.subjects(name, LOOPBACK)}
    throttle.counters().delete_many([f"{stem}:{part}" for stem in stems for part in ("tries", "locked")])


def sign_in(username: str, password: str) -> str:
    """A sign-in from a client of its own, in this thread; the page it ends on ("signed in" if redirected)."""
    try:
        response = Client().post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=LOOPBACK)
        return "signed in" if response.status_code == 302 else response.content.decode()
    finally:
        connections.close_all()


@pytest.fixture
def slow_password_checks(monkeypatch):
    """Each password check takes half a second, as a strong hash may; the list of passwords checked so far."""
    checked, check = [], User.check_password

    def slowly(user, raw_password):
        checked.append(raw_password)
        time.sleep(0.5)
        return check(user, raw_password)

    monkeypatch.setattr(User, "check_password", slowly)
    return checked


def test_it_counts_every_guess_of_a_burst_and_refuses_the_right_password_within_it(
    transactional_db, settings, slow_password_checks
):
    make_user("ada")
    limit = settings.SIGNIN_FAILURES_PER_USERNAME
    go = threading.Barrier(BURST)

    def guess(n):
        go.wait()
        return sign_in("ada", f"wrong {n}")

    with ThreadPoolExecutor(BURST + 1) as pool:
        guesses = [pool.submit(guess, n) for n in range(BURST)]
        # The right password comes once every guess is being checked or was answered: while the first ones
        # are still being checked.
        deadline = time.monotonic() + 30
        while len(slow_password_checks) + sum(f.done() for f in guesses) < BURST and time.monotonic() < deadline:
            time.sleep(0.01)
        right = pool.submit(sign_in, "ada", PASSWORD).result()
        pages = [future.result() for future in guesses]

    assert REFUSED in right
    assert "signed in" not in pages
    # Only guesses within the limit had their password checked (fewer, none on a loaded machine, when the lockout
    # the burst started came before some of them were); the others, and the right one, were refused unchecked.
    checked = len(slow_password_checks)
    assert checked <= limit and PASSWORD not in slow_password_checks
    assert sum(REFUSED in page for page in pages) == BURST - checked
    [(_, stem, _)] = throttle.subjects("ada", "")
    assert throttle.counters().get(f"{stem}:tries") == BURST + 1
    actions = list(AuditEvent.objects.order_by("seq").values_list("action", flat=True))
    assert sorted(actions) == ["user.login_failed"] * checked + ["user.login_locked"]


def in_one_minute(attempt):
    """What `attempt` gives, made within one of the fixed minutes the /mcp rate limit counts in: made again, once,
    when a minute began during the first (an attempt takes seconds, no wait for a fresh minute needed)."""
    for _ in range(2):
        minute = time.time() // 60
        made = attempt()
        if time.time() // 60 == minute:
            return made
    raise AssertionError("two attempts each crossed into a new minute")


def mcp_request(http: httpx.Client, url: str, secret: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern_envelope()}
    headers = {"Authorization": f"Bearer {secret}", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    return http.post(url, json=body, headers={**headers, "Accept": "application/json, text/event-stream"}).status_code


def test_it_keeps_an_address_locked_out_and_a_token_s_count_through_a_thousand_made_up_bearer_tokens(
    live_console, settings
):
    settings.SIGNIN_FAILURES_PER_ADDRESS = 3
    settings.MCP_RATE_LIMIT_PER_MINUTE = 2
    make_user("ada")
    for name in NAMES[1:]:
        sign_in(name, "wrong")
    assert throttle.seconds_locked("", LOOPBACK) > 0
    url = live_console + "/mcp"

    def steady_flood_steady():
        # A token of its own for each attempt: an attempt's count starts at none.
        secret = create_token(f"steady client {secrets.token_hex(4)}")[1]
        with httpx.Client(timeout=30) as http:
            before = [mcp_request(http, url, secret) for _ in range(2)]
            with ThreadPoolExecutor(8) as pool:
                made_up = ("mcpc_" + secrets.token_urlsafe(32) for _ in range(1000))
                flood = set(pool.map(lambda secret: mcp_request(http, url, secret), made_up))
            return before, flood, mcp_request(http, url, secret)

    assert in_one_minute(steady_flood_steady) == ([200, 200], {401}, 429)
    assert throttle.seconds_locked("", LOOPBACK) > 0
    assert REFUSED in sign_in("ada", PASSWORD)
