"""Single sign-on in-process (tests/signin/conftest.py's provider): the flow's checks, the roles set from the
groups claim at every sign-in, what a refusal takes away, the audit, and the password form under LOCAL_LOGIN."""

import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from asgiref.sync import sync_to_async
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.test import Client

from approvals import roles
from approvals.actions import person_access
from approvals.api import keys
from approvals.api.models import ApiKey
from approvals.audit.models import AuditEvent
from approvals.signin import provider, sso
from approvals.signin.models import SsoIdentity
from tests.api.conftest import bearer
from tests.fixtures.people import PASSWORD, make_user
from tests.fixtures.sockets import cookies_of, open_socket
from tests.signin.conftest import CLIENT_ID, ISSUER, FakeProvider

pytestmark = pytest.mark.django_db


def roles_of(username) -> set[str]:
    return set(User.objects.get(username=username).groups.values_list("name", flat=True))


def page_text(response) -> str:
    return response.content.decode()


def test_it_signs_an_operator_in_with_their_role_and_audits_the_issuer_and_subject(client, idp, sso_sign_in):
    idp.accounts["u-17"] = {"preferred_username": "olivia", "email": "olivia@example.test", "groups": ["mcp-operators"]}

    answer = sso_sign_in("u-17")

    assert answer.status_code == 302 and answer["Location"] == "/"
    assert client.get("/queue/").status_code == 200
    olivia = User.objects.get(username="olivia")
    assert roles_of("olivia") == {roles.OPERATOR} and not olivia.has_usable_password()
    assert olivia.email == "olivia@example.test"
    assert SsoIdentity.objects.get(user=olivia).subject == "u-17"
    login = AuditEvent.objects.get(action="user.login")
    assert login.actor_name == "olivia"
    assert login.data == {"address": "127.0.0.1", "method": "sso", "issuer": ISSUER, "subject": "u-17"}
    changed = AuditEvent.objects.get(action="user.roles_changed")
    assert (changed.data["before"], changed.data["after"]) == ([], ["operator"])
    every = str(list(AuditEvent.objects.values_list("data", flat=True)))
    assert "access-u-17" not in every and "eyJ" not in every


def test_it_sends_pkce_state_and_nonce_and_the_code_verifier_with_the_code(client, idp, sso_sign_in):
    idp.accounts["u-1"] = {"groups": ["mcp-operators"]}
    start = client.get("/login/sso/")
    query = parse_qs(urlsplit(start["Location"]).query)

    assert start["Location"].startswith(f"{ISSUER}/auth?")
    assert query["code_challenge_method"] == ["S256"] and query["client_id"] == [CLIENT_ID]
    assert query["redirect_uri"] == ["http://testserver/login/sso/callback/"]
    assert len(query["state"][0]) >= 32 and len(query["nonce"][0]) >= 32
    client.get(f"/login/sso/callback/?{idp.authorize(start['Location'], 'u-1')}")
    assert len(idp.token_requests[0]["code_verifier"]) >= 43


def test_it_sets_the_roles_from_the_claim_at_every_sign_in(client, idp, sso_sign_in):
    idp.accounts["u-2"] = {"preferred_username": "ann", "groups": ["mcp-operators"]}
    sso_sign_in("u-2")
    idp.accounts["u-2"]["groups"] = ["mcp-admins", "mcp-auditors", "everyone"]

    sso_sign_in("u-2", browser=Client())

    assert roles_of("ann") == {roles.ADMIN, roles.AUDITOR}
    assert SsoIdentity.objects.count() == 1
    last = AuditEvent.objects.filter(action="user.roles_changed").order_by("-seq").first()
    assert (last.data["before"], last.data["after"]) == (["operator"], ["admin", "auditor"])


def test_it_refuses_a_first_sign_in_whose_groups_give_no_role_and_makes_no_account(client, idp, sso_sign_in):
    idp.accounts["u-3"] = {"preferred_username": "visitor", "groups": ["everyone"]}

    answer = sso_sign_in("u-3")

    assert answer["Location"] == "/login/"
    assert sso.NO_ROLE in page_text(client.get("/login/"))
    assert not User.objects.filter(username="visitor").exists() and not SsoIdentity.objects.exists()
    refused = AuditEvent.objects.get(action="user.login_refused")
    assert refused.data["subject"] == "u-3" and refused.data["issuer"] == ISSUER
    assert not AuditEvent.objects.filter(action__in=["user.login", "user.login_failed"]).exists()


def test_it_takes_every_role_session_and_api_key_from_someone_moved_to_no_group(client, idp, sso_sign_in):
    idp.accounts["u-4"] = {"preferred_username": "bob", "groups": ["mcp-operators"]}
    sso_sign_in("u-4")
    bob = User.objects.get(username="bob")
    _, secret = keys.create_key(bob, "bot")
    assert client.get("/api/v1/me", headers=bearer(secret)).status_code == 200
    idp.accounts["u-4"]["groups"] = []

    elsewhere = Client()
    answer = sso_sign_in("u-4", browser=elsewhere)

    assert answer["Location"] == "/login/" and sso.NO_ROLE in page_text(elsewhere.get("/login/"))
    assert roles_of("bob") == set()
    # The session the first sign-in opened has ended, and the key is revoked, in one record naming the reason.
    assert client.get("/queue/")["Location"].startswith("/login/")
    assert client.get("/api/v1/me", headers=bearer(secret)).status_code == 401
    assert ApiKey.objects.get().revoked_at is not None
    ended = AuditEvent.objects.get(action="user.access_ended")
    assert (ended.data["username"], ended.data["reason"]) == ("bob", person_access.REFUSED_BY_PROVIDER)
    assert ended.data["api_keys"] == [f"bot ({ApiKey.objects.get().prefix}…)"] and ended.data["sessions"] == 1
    last = AuditEvent.objects.filter(action="user.roles_changed").order_by("-seq").first()
    assert (last.data["before"], last.data["after"]) == (["operator"], [])
    assert AuditEvent.objects.get(action="user.login_refused").data["username"] == "bob"


@pytest.mark.django_db(transaction=True)
async def test_it_closes_the_open_page_s_socket_of_someone_moved_to_no_group(idp):
    idp.accounts["u-5"] = {"groups": ["mcp-operators"]}
    browser = Client()

    def sign_in(subject, browser):
        start = browser.get("/login/sso/")
        return browser.get(f"/login/sso/callback/?{idp.authorize(start['Location'], subject)}")

    await sync_to_async(sign_in)("u-5", browser)
    socket, connected = await open_socket(await sync_to_async(cookies_of)(browser))
    assert connected
    idp.accounts["u-5"]["groups"] = ["someone-else"]

    await sync_to_async(sign_in)("u-5", Client())

    message = await socket.receive_output(timeout=5)
    assert (message["type"], message.get("code")) == ("websocket.close", 4403)
    await socket.disconnect()


def test_it_never_links_a_sign_in_to_an_existing_account_of_the_same_name(client, idp, sso_sign_in):
    local = make_user("ada", roles.ADMIN)
    idp.accounts["u-6"] = {"preferred_username": "ada", "email": "ada@example.test", "groups": ["mcp-auditors"]}

    sso_sign_in("u-6")

    made = SsoIdentity.objects.get(subject="u-6").user
    assert made != local and made.username.startswith("ada-") and roles_of(made.username) == {roles.AUDITOR}
    assert roles_of("ada") == {roles.ADMIN} and User.objects.get(pk=local.pk).check_password(PASSWORD)


def test_it_refuses_a_deactivated_account_though_its_groups_still_map(client, idp, sso_sign_in):
    idp.accounts["u-7"] = {"preferred_username": "gus", "groups": ["mcp-operators"]}
    sso_sign_in("u-7")
    User.objects.filter(username="gus").update(is_active=False)

    answer = sso_sign_in("u-7", browser=Client())

    assert answer["Location"] == "/login/"
    assert AuditEvent.objects.get(action="user.login_refused").data["reason"] == sso.DEACTIVATED
    assert AuditEvent.objects.get(action="user.access_ended").data["reason"] == person_access.DEACTIVATED


def test_it_refuses_a_superuser_the_provider_gives_no_group_but_leaves_them_their_credentials(client, idp, sso_sign_in):
    idp.accounts["u-8"] = {"preferred_username": "root", "groups": ["mcp-admins"]}
    sso_sign_in("u-8")
    User.objects.filter(username="root").update(is_superuser=True)
    _, secret = keys.create_key(User.objects.get(username="root"), "break-glass bot")
    idp.accounts["u-8"]["groups"] = []

    answer = sso_sign_in("u-8", browser=Client())

    assert answer["Location"] == "/login/"
    assert client.get("/api/v1/me", headers=bearer(secret)).status_code == 200
    assert not AuditEvent.objects.filter(action="user.access_ended").exists()


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_it_accepts_id_tokens_signed_with_rs256_or_es256(client, idp, sso_sign_in, alg):
    fresh = FakeProvider(alg)
    idp.alg, idp.kid, idp.key = fresh.alg, fresh.kid, fresh.key
    idp.accounts["u-8"] = {"groups": ["mcp-operators"]}

    assert sso_sign_in("u-8")["Location"] == "/"


def checked(idp, token):
    """The backend's check of `token`, as the callback runs it, against the provider's keys."""
    backend = sso.SsoBackend()
    backend.issuer, backend.OIDC_RP_CLIENT_ID = ISSUER, CLIENT_ID
    backend.OIDC_RP_SIGN_ALGO, backend.OIDC_RP_IDP_SIGN_KEY = "RS256", None
    backend.OIDC_OP_JWKS_ENDPOINT = idp.discovery["jwks_uri"]
    return backend.verify_token(token, nonce="n")


def test_it_checks_the_id_token_s_issuer_audience_times_nonce_and_signature(idp):
    good = {"sub": "u-9", "nonce": "n"}
    assert checked(idp, idp.id_token(good))["sub"] == "u-9"
    now = int(time.time())
    for wrong in (
        {"iss": "https://other.example"},
        {"aud": "another-client"},
        {"exp": now - 3600, "iat": now - 7200},
        {"nonce": "replayed"},
    ):
        with pytest.raises(SuspiciousOperation):
            checked(idp, idp.id_token({**good, **wrong}))
    stranger = rsa.generate_private_key(65537, 2048)
    with pytest.raises(SuspiciousOperation):
        checked(idp, idp.id_token(good, key=stranger, alg="RS256"))


def test_it_refuses_unsigned_and_hmac_tokens_and_headers_without_a_key_id(idp):
    good = {"sub": "u-9", "nonce": "n", "iss": ISSUER, "aud": CLIENT_ID, "iat": int(time.time())}
    good["exp"] = good["iat"] + 60
    for token in (
        jwt.encode(good, None, algorithm="none", headers={"kid": idp.kid}),
        jwt.encode(good, "client secret" * 3, algorithm="HS256", headers={"kid": idp.kid}),
        idp.id_token(good, headers={"typ": "JWT"}),
        "not a token",
        None,
    ):
        with pytest.raises(SuspiciousOperation):
            checked(idp, token)


@pytest.mark.parametrize(
    ("misbehaving", "reason"),
    [
        ({"id_token_extra": {"aud": "another-client"}}, "Audience doesn't match"),
        ({"userinfo_extra": {"sub": "someone-else"}}, "another subject"),
        ({"discovery": {"issuer": "https://impostor.example"}}, "describes the issuer 'https://impostor.example'"),
        ({"id_token_extra": {"sub": "x" * 256}}, "not a string of 1 to 255"),
    ],
)
def test_it_refuses_a_provider_s_bad_answer_with_a_message_and_an_audit_record(
    client, idp, sso_sign_in, misbehaving, reason
):
    idp.accounts["u-10"] = {"preferred_username": "eve", "groups": ["mcp-admins"]}
    start = client.get("/login/sso/")
    for name, value in misbehaving.items():
        setattr(idp, name, {**getattr(idp, name), **value})
    provider.forget()

    answer = client.get(f"/login/sso/callback/?{idp.authorize(start['Location'], 'u-10')}")

    assert answer.status_code == 302 and answer["Location"] == "/login/"
    assert "Signing in with SSO did not succeed" in page_text(client.get("/login/"))
    assert not User.objects.filter(username="eve").exists()
    failure = AuditEvent.objects.get(action="user.login_failed").data
    assert failure["method"] == "sso" and reason in failure["reason"]


def test_it_refuses_a_callback_no_sign_in_started_or_the_provider_refused(client, idp):
    assert client.get("/login/sso/callback/?code=abc&state=never-sent")["Location"] == "/login/"
    assert client.get("/login/sso/callback/?error=access_denied&state=x")["Location"] == "/login/"
    reasons = [event.data["reason"] for event in AuditEvent.objects.filter(action="user.login_failed")]
    assert len(reasons) == 2 and "access_denied" in reasons[1]


def test_it_tells_the_person_when_the_provider_cannot_be_reached(client, idp):
    idp.discovery = {"issuer": ISSUER}

    answer = client.get("/login/sso/")

    assert answer["Location"] == "/login/"
    assert "SSO is unavailable" in page_text(client.get("/login/"))


def test_it_keeps_the_discovery_document_and_refuses_one_for_another_issuer(idp, monkeypatch):
    assert provider.metadata()["token_endpoint"] == f"{ISSUER}/token"
    idp.discovery = {**idp.discovery, "token_endpoint": f"{ISSUER}/moved"}
    assert provider.metadata()["token_endpoint"] == f"{ISSUER}/token"
    monkeypatch.setattr(provider, "KEEP_SECONDS", 0)
    assert provider.metadata()["token_endpoint"] == f"{ISSUER}/moved"
    idp.discovery = {**idp.discovery, "issuer": f"{ISSUER}/"}
    with pytest.raises(provider.ProviderError, match="set it to exactly that"):
        provider.metadata()


def test_it_offers_sso_beside_the_password_form_only_while_an_issuer_is_set(client, settings):
    settings.OIDC_ISSUER = ""
    page = page_text(client.get("/login/"))
    assert "Sign in with SSO" not in page and 'name="password"' in page
    assert client.get("/login/sso/").status_code == 404

    settings.OIDC_ISSUER = ISSUER
    page = page_text(client.get("/login/?next=/queue/"))
    assert "Sign in with SSO" in page and 'href="/login/sso/?next=/queue/"' in page and 'name="password"' in page


@pytest.fixture
def sso_only(settings, idp):
    settings.LOCAL_LOGIN = False


def test_it_leaves_only_sso_with_local_login_off(client, sso_only):
    make_user("olivia", roles.OPERATOR)

    page = page_text(client.get("/login/"))
    posted = client.post("/login/", {"username": "olivia", "password": PASSWORD})

    assert "Sign in with SSO" in page and 'name="password"' not in page
    assert posted.status_code == 200 and client.get("/queue/").status_code == 302
    assert not AuditEvent.objects.filter(action="user.login").exists()


def test_it_keeps_a_break_glass_password_form_for_superusers_alone_audited(client, sso_only):
    make_user("root", superuser=True)
    make_user("olivia", roles.OPERATOR)

    refused = client.post("/login/local/", {"username": "olivia", "password": PASSWORD}, REMOTE_ADDR="192.0.2.50")
    assert refused.status_code == 200 and "Please enter a correct username" in page_text(refused)
    assert "only superusers sign in here" in page_text(refused)
    signed = client.post("/login/local/", {"username": "root", "password": PASSWORD}, REMOTE_ADDR="192.0.2.50")

    assert signed.status_code == 302 and client.get("/queue/").status_code == 200
    login = AuditEvent.objects.get(action="user.login")
    assert (login.actor_name, login.data["method"], login.data["break_glass"]) == ("root", "password", True)


def test_it_ends_password_sessions_of_everyone_but_superusers_when_local_login_turns_off(settings, idp):
    settings.LOCAL_LOGIN = True
    olivia, root = Client(), Client()
    olivia.force_login(make_user("olivia", roles.OPERATOR))
    root.force_login(make_user("root", superuser=True))

    settings.LOCAL_LOGIN = False

    assert olivia.get("/queue/").status_code == 302 and root.get("/queue/").status_code == 200


def test_it_sends_the_break_glass_page_to_the_sign_in_page_while_local_login_is_on(client):
    assert client.get("/login/local/")["Location"] == "/login/"


def test_it_refuses_to_start_on_settings_that_sign_nobody_in(settings):
    settings.OIDC_ROLE_MAP = {"mcp-admins": "root"}
    with pytest.raises(ImproperlyConfigured, match="names root"):
        sso.check_settings()
    settings.OIDC_ROLE_MAP, settings.LOCAL_LOGIN, settings.OIDC_ISSUER = {}, False, ""
    with pytest.raises(ImproperlyConfigured, match="needs OIDC_ISSUER"):
        sso.check_settings()
    settings.OIDC_ISSUER, settings.OIDC_CLIENT_ID = ISSUER, ""
    with pytest.raises(ImproperlyConfigured, match="without OIDC_CLIENT_ID"):
        sso.check_settings()
    settings.OIDC_CLIENT_ID = CLIENT_ID
    with pytest.raises(ImproperlyConfigured, match="without OIDC_ROLE_MAP"):
        sso.check_settings()
    settings.OIDC_ROLE_MAP = {"mcp-operators": "operator"}
    sso.check_settings()
