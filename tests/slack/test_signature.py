"""Slack's request signature, as its documentation computes it."""

from approvals.slack.signature import problem

# Slack's documented example: https://api.slack.com/authentication/verifying-requests-from-slack
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
STAMP = "1531420618"
BODY = (
    b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
    b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
    b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


def test_it_accepts_slacks_own_example():
    assert problem(SECRET, STAMP, BODY, SIGNATURE, now=int(STAMP) + 10) == ""


def test_it_refuses_another_secret_body_or_signature():
    now = int(STAMP)
    assert "does not match" in problem("another", STAMP, BODY, SIGNATURE, now=now)
    assert "does not match" in problem(SECRET, STAMP, BODY + b"&x=1", SIGNATURE, now=now)
    assert "does not match" in problem(SECRET, STAMP, BODY, SIGNATURE[:-1] + "0", now=now)
    assert "does not match" in problem(SECRET, STAMP, BODY, "v0=é", now=now)


def test_it_refuses_a_timestamp_more_than_five_minutes_away():
    assert "five minutes" in problem(SECRET, STAMP, BODY, SIGNATURE, now=int(STAMP) + 301)
    assert "five minutes" in problem(SECRET, STAMP, BODY, SIGNATURE, now=int(STAMP) - 301)
    assert problem(SECRET, STAMP, BODY, SIGNATURE, now=int(STAMP) + 300) == ""


def test_it_refuses_a_request_without_a_signature_or_a_numeric_timestamp():
    assert "no Slack signature" in problem(SECRET, "", BODY, SIGNATURE)
    assert "no Slack signature" in problem(SECRET, STAMP, BODY, "")
    assert "not a number" in problem(SECRET, "1e9", BODY, SIGNATURE)
    assert "not a number" in problem(SECRET, "١٥٣١٤٢٠٦١٨", BODY, SIGNATURE)
