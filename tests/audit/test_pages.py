"""The audit pages and who may use them: auditors read and export, operators see the calls they decided,
admins alone change retention; sign-ins and Django admin changes land in the log."""

import csv
import io

import pytest
from asgiref.sync import sync_to_async
from django import forms
from django.urls import reverse

from approvals import roles
from approvals.audit.models import AuditEvent, AuditVerification
from approvals.audit_log import export
from approvals.calls import deciding, lifecycle
from approvals.catalog.models import Server
from approvals.protocol import revisions
from approvals.tokens.context import ClientContext
from tests.audit.conftest import trigger_disabled
from tests.fixtures.people import PASSWORD, make_user


@pytest.fixture
def decided(client_token, refund_tool):
    """One call approved by the operator ann, one denied by the operator bob."""
    ann, bob = make_user("ann", roles.OPERATOR), make_user("bob", roles.OPERATOR)
    ctx = ClientContext(client_token, revisions.MODERN, "2026-07-28")
    mine, _ = lifecycle.receive_call(ctx, refund_tool, {"order_id": 1, "amount": 5}, 1, None)
    theirs, _ = lifecycle.receive_call(ctx, refund_tool, {"order_id": 2, "amount": 6}, 2, None)
    deciding.decide(mine.pk, ann, True)
    deciding.decide(theirs.pk, bob, False, "no")
    return mine, theirs


def test_it_shows_auditors_the_filtered_log(login, decided, refund_tool):
    page = login("auditor").get(reverse("audit"), {"tool": refund_tool.exposed_name, "action": "call.denied"})
    assert page.status_code == 200
    assert [e.action for e in page.context["events"]] == ["call.denied"]
    assert page.context["matching"].count == 1
    assert "Export CSV" in page.content.decode()


def test_it_shows_the_verification_first_and_each_events_call_and_time_zone(login, decided):
    html = login("auditor").get(reverse("audit")).content.decode()
    assert html.index("Verify now") < html.index("Export evidence pack") < html.index('<table class="list audit">')
    denied = AuditEvent.objects.get(action="call.denied")
    assert f'href="{reverse("audit_call", args=[denied.call_id])}"' in html
    assert f"{denied.at:%Y-%m-%d %H:%M:%S} UTC" in html


def test_it_finds_a_tool_by_the_name_typed_without_listing_every_tool(login, decided, refund_tool):
    client = login("auditor")
    by_name = client.get(reverse("audit"), {"tool": refund_tool.exposed_name, "action": "call.denied"})
    assert [e.action for e in by_name.context["events"]] == ["call.denied"]
    page = by_name.content.decode()
    assert f'name="tool" value="{refund_tool.exposed_name}"' in page and f'<option value="{refund_tool.pk}"' not in page
    unknown = client.get(reverse("audit"), {"tool": "no_such_tool"})
    assert unknown.status_code == 200 and "No tool goes by that name." in unknown.content.decode()


def test_it_opens_an_event_with_its_calls_whole_timeline(login, decided):
    denied = AuditEvent.objects.get(action="call.denied")
    page = login("auditor").get(reverse("audit_event", args=[denied.seq]))
    assert [step.action for step in page.context["timeline"]] == [
        "call.received",
        "call.policy",
        "call.pending",
        "call.denied",
    ]
    assert denied.hash in page.content.decode()


@pytest.mark.django_db(transaction=True)
async def test_it_streams_a_csv_export_of_the_filter_chunk_by_chunk(async_client, decided, monkeypatch):
    monkeypatch.setattr(export, "BATCH", 2)
    auditor = await sync_to_async(make_user)("auditor", roles.AUDITOR)
    await async_client.aforce_login(auditor)
    response = await async_client.get(reverse("audit_export_csv"), {"outcome": "denied"})
    assert response.status_code == 200 and response.is_async
    assert response["Content-Disposition"].startswith('attachment; filename="audit-')
    chunks = [chunk async for chunk in response.streaming_content]
    # Header, four events, where the public chain starts and the head, two lines at a time: sent as read,
    # never gathered first.
    assert len(chunks) == 4
    text = b"".join(chunks).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert [row[5] for row in rows[1:-2]] == ["call.received", "call.policy", "call.pending", "call.denied"]
    assert [row[0] for row in rows[-2:]] == ["# public chain before", "# chain head"]


def test_it_refuses_the_log_and_exports_to_operators(login, decided):
    operator = login("operator")
    assert operator.get(reverse("audit")).status_code == 403
    assert operator.get(reverse("audit_export_jsonl")).status_code == 403
    assert operator.post(reverse("audit_verify")).status_code == 403


def test_it_shows_operators_the_calls_they_decided_and_no_others(client, decided):
    mine, theirs = decided
    client.login(username="ann", password=PASSWORD)
    page = client.get(reverse("my_decisions"))
    assert [call.pk for call in page.context["calls"]] == [mine.pk]
    timeline = client.get(reverse("audit_call", args=[mine.pk]))
    assert [step.action for step in timeline.context["timeline"]][-1] == "call.approved"
    assert client.get(reverse("audit_call", args=[theirs.pk])).status_code == 403
    theirs_denied = AuditEvent.objects.get(call_id=theirs.pk, action="call.denied")
    assert client.get(reverse("audit_event", args=[theirs_denied.seq])).status_code == 403


def test_it_lets_auditors_verify_from_the_page_and_shows_the_result(login, decided):
    auditor = login("auditor")
    response = auditor.post(reverse("audit_verify"), follow=True)
    check = AuditVerification.objects.get()
    assert check.ok and check.run_by == "auditor" and check.checked == AuditEvent.objects.count()
    assert "intact" in response.content.decode()
    with trigger_disabled():
        AuditEvent.objects.filter(seq=2).update(actor_name="nobody")
    page = auditor.post(reverse("audit_verify"), follow=True).content.decode()
    assert "broken" in page and "at seq 2" in page


def test_it_lets_only_admins_change_retention(login, db):
    assert login("auditor").post(reverse("audit_retention"), {"retention_days": "1"}).status_code == 403
    admin = login("admin", username="root")
    admin.post(reverse("audit_retention"), {"retention_days": "90"})
    changed = AuditEvent.objects.get(action="retention.changed")
    assert (changed.actor_name, changed.data["after"]) == ("root", 90)
    assert "older than 90 days" in admin.get(reverse("audit")).content.decode()


def test_it_records_sign_ins_and_failed_sign_ins_without_the_password(client, db):
    make_user("ada", roles.AUDITOR)
    client.post(reverse("login"), {"username": "ada", "password": "wrong password, remembered badly"})
    client.post(reverse("login"), {"username": "ada", "password": PASSWORD})
    failed, login = AuditEvent.objects.filter(action__startswith="user.").order_by("seq")
    assert (failed.action, failed.data["username"]) == ("user.login_failed", "ada")
    assert (login.action, login.actor_type, login.actor_name) == ("user.login", "user", "ada")
    assert "remembered" not in str(failed.data) and "*" not in str(failed.data)


def admin_form_data(page):
    """What a browser would post back from a Django admin change form, unchanged."""
    data = {}
    for bound in page.context["adminform"].form:
        value, widget = bound.value(), bound.field.widget
        if isinstance(widget, forms.CheckboxInput):
            if value:
                data[bound.html_name] = "on"
        elif isinstance(widget, forms.MultiWidget):
            data.update(
                {f"{bound.html_name}_{n}": part for n, part in enumerate(widget.decompress(value)) if part is not None}
            )
        elif value is not None:
            data[bound.html_name] = value
    return data


def test_it_records_django_admin_changes_with_values_before_and_after(client, db):
    client.force_login(make_user("root", superuser=True))
    server = Server.objects.create(name="Shop", slug="shop", transport="http", url="https://shop.example/mcp")
    url = reverse("admin:approvals_server_change", args=[server.pk])
    response = client.post(url, admin_form_data(client.get(url)) | {"trusted": "on"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    changed = AuditEvent.objects.get(action="admin.changed")
    assert (changed.actor_name, changed.server_id, changed.data["model"]) == ("root", server.pk, "approvals.server")
    assert changed.data["before"]["trusted"] is False and changed.data["after"]["trusted"] is True


def test_it_records_password_changes_in_django_admin_without_the_hash(client, db):
    root = make_user("root", superuser=True)
    ada = make_user("ada")
    client.force_login(root)
    new = "another long enough password"
    response = client.post(
        reverse("admin:auth_user_password_change", args=[ada.pk]), {"password1": new, "password2": new}
    )
    assert response.status_code == 302
    changed = AuditEvent.objects.get(action="admin.changed")
    assert changed.data["object"] == "ada"
    ada.refresh_from_db()
    assert ada.password not in str(changed.data) and new not in str(changed.data)


def test_it_records_deletions_in_django_admin(client, db):
    client.force_login(make_user("root", superuser=True))
    server = Server.objects.create(name="Old", slug="old", transport="http", url="https://old.example/mcp")
    client.post(reverse("admin:approvals_server_delete", args=[server.pk]), {"post": "yes"})
    deleted = AuditEvent.objects.get(action="admin.deleted")
    assert (deleted.server_id, deleted.data["object"]) == (server.pk, "Old")
    assert not Server.objects.exists()
