import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from approvals import roles
from approvals.actions import revocation
from approvals.audit.models import AuditEvent
from approvals.display import snippets
from approvals.tokens import credentials
from approvals.tokens.models import ClientToken
from tests.fixtures.catalog import make_server, make_tool
from tests.fixtures.people import make_user


def create(client, name="alice-laptop", globs="*"):
    return client.post(reverse("token_add"), {"name": name, "tool_globs": globs})


def secret_of(response):
    return response.context["secret"]


@pytest.mark.parametrize(
    "method, page",
    [
        ("get", "token_add"),
        ("post", "token_add"),
        ("get", "token_edit"),
        ("post", "token_edit"),
        ("get", "token_rotate"),
        ("post", "token_rotate"),
        ("get", "token_revoke"),
        ("post", "token_revoke"),
    ],
)
def test_it_refuses_a_non_admin_every_changing_token_page_with_403(operator_client, method, page):
    token, secret = credentials.create_token("agent")
    args = [] if page == "token_add" else [token.pk]
    response = getattr(operator_client, method)(
        reverse(page, args=args), {"name": "sneaky", "description": "x", "grace": "0"} if method == "post" else None
    )
    assert response.status_code == 403
    assert ClientToken.objects.get().revoked_at is None and ClientToken.objects.count() == 1
    assert credentials.authenticate(secret) == token and token.description == ""
    assert list(AuditEvent.objects.filter(action__startswith="token.").values_list("action", flat=True)) == [
        "token.created"
    ]


def test_it_sends_an_anonymous_visitor_to_the_login_page(client, db):
    response = client.get(reverse("tokens"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_it_lets_any_user_holding_the_manage_tokens_permission_create_tokens(login, django_user_model):
    client = login(roles.AUDITOR, username="tina")
    assert client.get(reverse("token_add")).status_code == 403
    django_user_model.objects.get(username="tina").user_permissions.add(
        Permission.objects.get(codename="manage_tokens")
    )
    assert client.get(reverse("token_add")).status_code == 200


@pytest.mark.parametrize("role", [roles.OPERATOR, roles.AUDITOR])
def test_it_lets_operators_and_auditors_read_the_list_without_any_button_that_changes(login, role):
    token, _ = credentials.create_token("ci-agent", description="nightly reports")
    reader = login(role, username="reader")
    page = reader.get(reverse("tokens")).content.decode()
    assert "ci-agent" in page and "nightly reports" in page
    for url in (reverse("token_add"), reverse("token_edit", args=[token.pk]), reverse("token_revoke", args=[token.pk])):
        assert url not in page
    assert reverse("tokens") in reader.get(reverse("servers")).content.decode()


def test_it_lists_each_token_with_prefix_patterns_creator_and_status(admin_client):
    creator = make_user("carol")
    active, _ = credentials.create_token("ci-agent", ["shop_*", "records_lookup"], creator)
    revoked, _ = credentials.create_token("old-laptop")
    revocation.revoke_token(revoked)
    page = admin_client.get(reverse("tokens")).content.decode()
    for text in ("ci-agent", active.prefix, "shop_*", "records_lookup", "carol", "old-laptop", "revoked", "never"):
        assert text in page
    assert reverse("token_revoke", args=[active.pk]) in page
    assert reverse("token_revoke", args=[revoked.pk]) not in page


def test_it_shows_the_secret_once_on_the_response_page_and_the_secret_works(admin_client):
    response = create(admin_client, globs="shop_*\n\nrecords_lookup\n")
    assert response.status_code == 200
    secret = secret_of(response)
    assert secret in response.content.decode()
    token = credentials.authenticate(secret)
    assert token.name == "alice-laptop" and token.tool_globs == ["shop_*", "records_lookup"]
    assert "no-store" in response["Cache-Control"]


def test_it_never_shows_the_secret_again(admin_client):
    response = create(admin_client)
    secret = secret_of(response)
    token = ClientToken.objects.get(name="alice-laptop")
    later = [
        reverse("tokens"),
        reverse("token_add"),
        reverse("token_revoke", args=[token.pk]),
        reverse("connect"),
        reverse("servers"),
    ]
    for url in later:
        assert secret not in admin_client.get(url).content.decode(), url
    assert secret not in str(dict(admin_client.session.items()))
    assert all(secret not in morsel.value for morsel in admin_client.cookies.values())
    assert not any(secret in str(event.data) for event in AuditEvent.objects.all())


def test_it_answers_the_create_post_itself_rather_than_redirecting_with_the_secret(admin_client):
    response = create(admin_client)
    assert response.status_code == 200 and "Location" not in response


def test_it_puts_the_new_token_into_the_connection_snippets(admin_client):
    response = create(admin_client)
    page = response.content.decode()
    assert f"export {snippets.TOKEN_VARIABLE}={secret_of(response)}" in page and f"Bearer {secret_of(response)}" in page
    assert "http://testserver/mcp" in page


def test_it_says_how_many_active_tools_the_token_reaches(admin_client):
    server = make_server()
    make_tool(server, "lookup")
    make_tool(server, "delete")
    page = create(admin_client, globs="records_look*").content.decode()
    assert "1 active tool today" in page


def test_it_offers_every_tool_by_default(admin_client):
    form = admin_client.get(reverse("token_add")).content.decode()
    textarea = r'<textarea id="token-globs" name="tool_globs" rows="3" spellcheck="false"[^>]*>\*</textarea>'
    assert re.search(textarea, form)


def test_it_keeps_what_was_typed_and_lists_the_errors_when_the_name_is_taken(admin_client):
    credentials.create_token("alice-laptop")
    response = create(admin_client, globs="shop_*")
    page = response.content.decode()
    assert response.status_code == 200 and response.context.get("secret") is None
    assert "exists already" in page and 'value="alice-laptop"' in page and ">shop_*</textarea>" in page
    assert ClientToken.objects.count() == 1


def test_it_refuses_the_reserved_name_anonymous(admin_client):
    assert "reserved" in create(admin_client, name="anonymous").content.decode()
    assert not ClientToken.objects.exists()


def test_it_asks_before_revoking(admin_client):
    token, secret = credentials.create_token("agent")
    page = admin_client.get(reverse("token_revoke", args=[token.pk])).content.decode()
    assert "Revoke agent?" in page and 'method="post"' in page
    assert credentials.authenticate(secret) == token


def test_it_revokes_on_confirmation_so_the_secret_stops_working(admin_client):
    token, secret = credentials.create_token("agent")
    response = admin_client.post(reverse("token_revoke", args=[token.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("tokens")
    assert "Revoked agent" in response.content.decode()
    assert credentials.authenticate(secret) is None
    event = AuditEvent.objects.get(action="token.revoked")
    assert event.actor_type == "user" and event.token_id == token.pk


def test_it_refuses_a_revoke_without_the_csrf_token(db):
    token, secret = credentials.create_token("agent")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(make_user("root", superuser=True))
    assert browser.post(reverse("token_revoke", args=[token.pk])).status_code == 403
    assert credentials.authenticate(secret) == token


def test_it_creates_a_token_with_owner_description_expiry_and_limits(admin_client):
    make_user("alice", roles.OPERATOR)
    response = admin_client.post(
        reverse("token_add"),
        {
            "name": "ci-agent",
            "tool_globs": "*",
            "owner": "alice",
            "description": "nightly reports",
            "expires": "2099-01-31",
            "rate_per_minute": "60",
            "max_pending_calls": "0",
        },
    )
    assert response.context["secret"]
    token = ClientToken.objects.get(name="ci-agent")
    assert token.owner.username == "alice" and token.description == "nightly reports"
    assert timezone.localtime(token.expires_at).date().isoformat() == "2099-01-31"
    assert (token.rate_per_minute, token.max_pending_calls) == (60, 0)


def test_it_refuses_an_owner_without_a_role_whose_token_would_be_refused(admin_client):
    make_user("dora")

    response = admin_client.post(reverse("token_add"), {"name": "ci-agent", "tool_globs": "*", "owner": "dora"})

    assert "'dora' is deactivated or holds no role" in response.content.decode().replace("&#x27;", "'")
    assert not ClientToken.objects.filter(name="ci-agent").exists()


def test_it_lists_owner_description_expiry_limits_and_where_a_token_was_last_used(admin_client, settings):
    settings.MCP_RATE_LIMIT_PER_MINUTE, settings.MAX_PENDING_CALLS_PER_TOKEN = 600, 20
    token, _ = credentials.create_token(
        "ci-agent",
        owner=make_user("alice"),
        description="nightly reports",
        expires_at=timezone.now() + timedelta(days=3),
    )
    credentials.create_token("own-limits", rate_per_minute=7, max_pending_calls=0)
    ClientToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now(), last_used_from="203.0.113.9")
    page = admin_client.get(reverse("tokens")).content.decode()
    for text in ("alice", "nightly reports", "600/min", "20 waiting", "(default)", "7/min", "no cap on waiting"):
        assert text in page, text
    assert "from 203.0.113.9" in page
    assert timezone.localtime(token.expires_at).strftime("%Y-%m-%d %H:%M") in page


def test_it_marks_an_expired_token_expired(admin_client):
    credentials.create_token("old-agent", expires_at=timezone.now() - timedelta(minutes=1))
    assert '<span class="badge off">expired</span>' in admin_client.get(reverse("tokens")).content.decode()


def test_it_changes_a_tokens_details_in_one_audit_event_with_before_and_after(admin_client):
    token, secret = credentials.create_token("ci-agent", ["shop_*"])
    make_user("bob", roles.OPERATOR)
    response = admin_client.post(
        reverse("token_edit", args=[token.pk]),
        {
            "tool_globs": "shop_*\nrecords_*",
            "owner": "bob",
            "description": "moved to bob",
            "expires": "",
            "rate_per_minute": "30",
            "max_pending_calls": "",
        },
        follow=True,
    )
    assert "Saved ci-agent" in response.content.decode()
    token.refresh_from_db()
    assert token.owner.username == "bob" and token.tool_globs == ["shop_*", "records_*"] and token.rate_per_minute == 30
    event = AuditEvent.objects.get(action="token.changed")
    assert event.data["before"]["owner"] is None and event.data["after"]["owner"] == "bob"
    assert event.data["before"]["rate_per_minute"] is None and event.data["after"]["rate_per_minute"] == 30
    assert credentials.authenticate(secret) == token


def test_it_keeps_an_expiry_left_as_shown_to_the_second(admin_client):
    expiry = timezone.now() + timedelta(days=30)
    token, _ = credentials.create_token("ci-agent", expires_at=expiry)
    form = admin_client.get(reverse("token_edit", args=[token.pk])).context["entered"]
    admin_client.post(reverse("token_edit", args=[token.pk]), {**form, "description": "same expiry"})
    token.refresh_from_db()
    assert token.expires_at == expiry and token.description == "same expiry"


def test_it_refuses_bad_details_and_changes_nothing(admin_client):
    token, _ = credentials.create_token("ci-agent")
    response = admin_client.post(
        reverse("token_edit", args=[token.pk]), {"tool_globs": "*", "expires": "yesterday", "rate_per_minute": "x"}
    )
    page = response.content.decode()
    assert response.status_code == 200 and "neither a duration" in page and "whole number" in page
    assert not AuditEvent.objects.filter(action="token.changed").exists()


def test_it_rotates_a_token_showing_the_new_secret_once_and_keeping_the_old_for_the_grace(admin_client):
    token, old = credentials.create_token("ci-agent")
    assert "1 hour" in admin_client.get(reverse("token_rotate", args=[token.pk])).content.decode()

    response = admin_client.post(reverse("token_rotate", args=[token.pk]), {"grace": "1h"})

    new = secret_of(response)
    assert new != old and new in response.content.decode() and "no-store" in response["Cache-Control"]
    assert credentials.authenticate(new) == token and credentials.authenticate(old) == token
    assert new not in admin_client.get(reverse("tokens")).content.decode()
    event = AuditEvent.objects.get(action="token.rotated")
    assert event.actor_type == "user" and event.data["old_secret_valid_until"]


def test_it_refuses_a_grace_period_it_does_not_offer(admin_client):
    token, old = credentials.create_token("ci-agent")
    response = admin_client.post(reverse("token_rotate", args=[token.pk]), {"grace": "999d"})
    assert response.context.get("secret") is None and "choose one of the grace periods" in response.content.decode()
    assert credentials.authenticate(old) == token


def test_it_records_a_revocation_with_the_token_before_and_after(admin_client):
    token, _ = credentials.create_token("agent")
    admin_client.post(reverse("token_revoke", args=[token.pk]))
    event = AuditEvent.objects.get(action="token.revoked")
    assert event.data["before"]["revoked_at"] is None and event.data["after"]["revoked_at"]


def test_it_marks_the_name_field_when_a_token_has_no_name(admin_client):
    page = admin_client.post(reverse("token_add"), {"name": "", "tool_globs": "*"}).content.decode()

    name = re.search(r'<input type="text" id="token-name"[^>]*>', page).group()
    assert 'aria-invalid="true"' in name and 'aria-describedby="token-name-help token-name-error"' in name
    assert '<div class="field invalid">\n  <label for="token-name">' in page
    assert re.search(r'<div class="error-text" id="token-name-error"><div>a token needs a name</div></div>', page)
    assert "<p>Not created: 1 problem to put right.</p>" in page
    assert '<li><a href="#token-name">Name</a>: a token needs a name</li>' in page
    globs = re.search(r"<textarea[^>]*>", page).group()
    assert "aria-invalid" not in globs and 'aria-describedby="token-globs-help"' in globs
    assert not ClientToken.objects.exists()


def test_it_marks_each_detail_that_is_wrong_under_that_field(admin_client):
    entered = {"name": "ci", "tool_globs": "*", "rate_per_minute": "0", "expires": "someday"}
    page = admin_client.post(reverse("token_add"), entered).content.decode()

    assert "a rate of 0 requests a minute" in re.search(r'id="token-rate-error">(.*?)</div></div>', page).group(1)
    assert "neither a duration" in re.search(r'id="token-expires-error">(.*?)</div></div>', page).group(1)
    assert 'aria-invalid="true"' not in re.search(r'<select id="token-owner"[^>]*>', page).group()


def test_it_links_the_edit_pages_summary_to_the_tools_field_at_fault(admin_client):
    token, _ = credentials.create_token("nightly")

    page = admin_client.post(reverse("token_edit", args=[token.pk]), {"tool_globs": "bad pattern!"}).content.decode()

    assert "<p>Not saved: 1 problem to put right.</p>" in page
    assert re.search(r'<li><a href="#token-globs">Tools</a>: [^<]+</li>', page)
    globs = re.search(r'<textarea id="token-globs"[^>]*>', page).group()
    assert 'aria-invalid="true"' in globs and 'aria-describedby="token-globs-help token-globs-error"' in globs
