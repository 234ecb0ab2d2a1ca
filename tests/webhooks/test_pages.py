"""Admins manage webhook endpoints on their pages; nobody else may, and every change is audited."""

import re

import pytest

from approvals import roles
from approvals.audit.models import AuditEvent
from approvals.webhooks import endpoints
from approvals.webhooks.models import WebhookDelivery, WebhookEndpoint

SLACK_URL = "https://hooks.slack.example/services/T000/B000/SECRETPATH"
FORM = {
    "url": SLACK_URL,
    "description": "team channel",
    "events": ["call.pending", "input.requested"],
    "slack": "on",
    "enabled": "on",
    "console_url": "https://console.example/",
}


@pytest.fixture
def added(db, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x")
    fields = {**FORM, "slack": True, "enabled": True}
    return endpoints.create_endpoint(fields, admin)[0]


def pages(endpoint_pk, delivery_pk):
    return [
        "/webhooks/",
        "/webhooks/new/",
        f"/webhooks/{endpoint_pk}/",
        f"/webhooks/{endpoint_pk}/rotate/",
        f"/webhooks/{endpoint_pk}/delete/",
        f"/webhooks/deliveries/{delivery_pk}/redeliver/",
    ]


@pytest.mark.parametrize("role", [roles.OPERATOR, roles.AUDITOR])
def test_it_refuses_every_webhook_page_to_people_who_are_not_admins(login, added, role):
    client = login(role)
    delivery = WebhookDelivery.objects.create(endpoint=added, message_id="msg_1", event_type="call.pending", payload={})
    for url in pages(added.pk, delivery.pk):
        assert client.get(url).status_code in (403, 405), url
        assert client.post(url, FORM).status_code == 403, url
    assert WebhookEndpoint.objects.count() == 1
    assert not AuditEvent.objects.filter(action__startswith="webhook.").exclude(action="webhook.created").exists()
    assert b"/webhooks/" not in client.get("/connect/").content


def test_it_sends_signed_out_visitors_to_sign_in(client, added):
    response = client.get("/webhooks/")
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_it_shows_the_secret_once_and_audits_the_endpoint_without_its_url_path(login):
    admin = login(roles.ADMIN)
    assert b"/webhooks/" in admin.get("/connect/").content
    created = admin.post("/webhooks/new/", FORM)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret.startswith("whsec_")
    assert endpoint.secret in created.content.decode()
    assert created["Cache-Control"].startswith("max-age=0")
    assert endpoint.secret not in admin.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert (endpoint.events, endpoint.slack, endpoint.console_url) == (FORM["events"], True, FORM["console_url"])

    event = AuditEvent.objects.get(action="webhook.created")
    assert event.actor_name == "admin"
    assert "SECRETPATH" not in str(event.data) and endpoint.secret not in str(event.data)
    assert event.data["after"]["url"] == "https://hooks.slack.example/…"


@pytest.mark.parametrize(
    "url, why",
    [
        ("ftp://example.com/hook", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("https://", "names no host"),
        ("http://example.com:99999/hook", "cannot be read"),
        ("http://[::1/hook", "cannot be read"),
    ],
)
def test_it_refuses_urls_it_cannot_post_to_with_the_reason(login, url, why):
    response = login(roles.ADMIN).post("/webhooks/new/", {**FORM, "url": url})
    assert response.status_code == 200
    assert why in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_it_audits_a_change_a_new_secret_and_a_deletion(login, added):
    admin = login(roles.ADMIN)
    old_secret = added.secret
    edited = {**FORM, "events": ["call.finished"], "description": "ops"}
    assert admin.post(f"/webhooks/{added.pk}/", edited).status_code == 302
    added.refresh_from_db()
    assert added.events == ["call.finished"] and added.description == "ops"

    rotated = admin.post(f"/webhooks/{added.pk}/rotate/")
    added.refresh_from_db()
    assert added.secret != old_secret and added.secret in rotated.content.decode()

    assert admin.post(f"/webhooks/{added.pk}/delete/").status_code == 302
    assert not WebhookEndpoint.objects.exists()

    audited = list(AuditEvent.objects.filter(action__startswith="webhook.").values_list("action", "actor_name"))
    assert audited == [
        ("webhook.created", "root"),
        ("webhook.changed", "admin"),
        ("webhook.rotated", "admin"),
        ("webhook.deleted", "admin"),
    ]
    change = AuditEvent.objects.get(action="webhook.changed").data
    assert (change["before"]["events"], change["after"]["events"]) == (FORM["events"], ["call.finished"])
    assert old_secret not in str(AuditEvent.objects.get(action="webhook.rotated").data)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://10.0.0.5/hook", "http://169.254.169.254/"])
def test_it_refuses_at_save_a_url_delivery_would_refuse_and_names_the_setting_on_the_field(login, settings, url):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    page = login(roles.ADMIN).post("/webhooks/new/", {**FORM, "url": url}).content.decode()

    assert not WebhookEndpoint.objects.exists()
    assert 'aria-invalid="true"' in re.search(r'<input[^>]*id="id_url"[^>]*>', page).group()
    assert 'aria-describedby="id_url_helptext id_url_error"' in page
    under_the_field = re.search(r'<div class="error-text" id="id_url_error">(.*?)</div></div>', page, re.S).group(1)
    assert "delivery would refuse it" in under_the_field and "WEBHOOK_ALLOWED_HOSTS" in under_the_field
    summary = re.search(r"<div [^>]*data-error-summary>(.*?)</div>", page, re.S).group(1)
    assert '<a href="#id_url">URL</a>: delivery would refuse it' in summary


def test_it_saves_a_private_url_once_its_host_is_allowed(login, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["10.0.0.0/8"]
    login(roles.ADMIN).post("/webhooks/new/", {**FORM, "url": "http://10.0.0.5/hook"})
    assert WebhookEndpoint.objects.get().url == "http://10.0.0.5/hook"
