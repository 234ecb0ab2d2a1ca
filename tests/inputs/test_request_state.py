"""The console's own requestState: signed, bound by its payload, expiring, refused when touched."""

import pytest

from approvals.protocol.request_state import StateError, read_state, sign_state

KEY = b"a secret key"


def test_it_reads_back_what_it_signed_until_it_expires():
    state = sign_state({"call": 7, "token": 3, "keys": ["shop/ab"]}, KEY, now=1000, lifetime=60)
    assert read_state(state, KEY, now=1059) == {"call": 7, "token": 3, "keys": ["shop/ab"], "exp": 1060}
    with pytest.raises(StateError, match="expired"):
        read_state(state, KEY, now=1060)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"),
        lambda s: s.replace(
            s.split(".")[1], sign_state({"call": 8, "token": 3}, KEY, now=1000, lifetime=60).split(".")[1]
        ),
        lambda s: "mcs0" + s[4:],
        lambda s: s.split(".")[0] + "." + s.split(".")[1],
        lambda s: "x" * 20000,
    ],
)
def test_it_refuses_a_state_that_was_altered(tamper):
    state = sign_state({"call": 7, "token": 3}, KEY, now=1000, lifetime=60)
    with pytest.raises(StateError):
        read_state(tamper(state), KEY, now=1001)


def test_it_refuses_a_state_signed_with_another_key():
    state = sign_state({"call": 7}, b"another key", now=1000, lifetime=60)
    with pytest.raises(StateError, match="altered or signed with another key"):
        read_state(state, KEY, now=1001)


def test_it_reserves_the_expiry_for_itself():
    with pytest.raises(ValueError):
        sign_state({"exp": 10**12}, KEY, now=1000, lifetime=60)
