"""The one module that talks to push services: a subscription's endpoint is a URL a browser chose, reached only
under the address policy; the VAPID key comes in any of the forms WEB_PUSH_VAPID_KEY takes."""

import json

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from approvals.push import vapid
from approvals.push.transport import Push, Transport
from tests.push.service import Browser, PushService, b64, unb64


@pytest.mark.parametrize(
    "endpoint, refusal",
    [
        ("https://169.254.169.254/latest/meta-data", "WEB_PUSH_ALLOWED_HOSTS"),
        ("https://127.0.0.1:9/push", "WEB_PUSH_ALLOWED_HOSTS"),
        ("file:///etc/passwd", "only http and https URLs are allowed"),
    ],
)
def test_it_refuses_an_endpoint_inside_unless_listed(endpoint, refusal):
    [error] = Transport(5).send_all([Push(Browser(endpoint).subscription, b"{}")])
    assert error is not None and refusal in error.message and error.status is None


def test_it_sends_plain_http_to_a_listed_host_only_and_reports_a_refusal_by_its_status():
    service = PushService([500])
    try:
        browser = service.browser("a")
        push = Push(browser.subscription, json.dumps({"title": "t"}).encode())
        [unlisted] = Transport(5).send_all([push])
        assert "not https" in unlisted.message or "WEB_PUSH_ALLOWED_HOSTS" in unlisted.message
        [refused, taken] = Transport(5, ["127.0.0.1"]).send_all([push, push])
        assert {getattr(refused, "status", None), getattr(taken, "status", None)} == {500, None}
        assert [received.payload for received in service.pushes(2)] == [{"title": "t"}, {"title": "t"}]
    finally:
        service.close()


def test_it_reads_the_vapid_key_as_pem_as_base64url_or_as_a_secret_it_derives_a_key_from(settings):
    key = ec.generate_private_key(ec.SECP256R1())
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    raw = b64(key.private_numbers().private_value.to_bytes(32))
    for given in (pem.decode(), raw):
        settings.WEB_PUSH_VAPID_KEY = given
        assert vapid.public_key() == b64(point)

    settings.WEB_PUSH_VAPID_KEY = "some secret text kept in var/"
    derived = vapid.public_key()
    assert derived == vapid.public_key() and derived != b64(point) and len(unb64(derived)) == 65
    header = vapid.authorization("https://push.example.net/send/1")
    token = dict(part.split("=", 1) for part in header.removeprefix("vapid ").split(","))["t"]
    verifying = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(derived))
    claims = jwt.decode(token, verifying, algorithms=["ES256"], audience="https://push.example.net")
    assert claims["sub"] == settings.WEB_PUSH_CONTACT

    settings.WEB_PUSH_VAPID_KEY = (
        ec.generate_private_key(ec.SECP384R1())
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )
    with pytest.raises(ValueError, match="P-256"):
        vapid.public_key()


def test_it_names_the_first_arguments_cut_short_and_counts_the_rest():
    from approvals.push.texts import arguments_text

    long = "x" * 100
    text = arguments_text({"note": long, "a": 1, "b": [1, 2], "c": True, "d": None})
    assert text == f"note: {long[:39]}…, a: 1, b: [1, 2] and 2 more"
    assert arguments_text({"Password": "hunter2"}, {}) == "Password: (hidden)"
    assert arguments_text("not an object") == ""
