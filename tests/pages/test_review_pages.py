"""The review pages: everyone reads what changed, admins accept or reject, and upstream text stays text."""

import re

import pytest
from django.urls import reverse

from approvals.audit.models import AuditEvent
from approvals.catalog import sync
from approvals.catalog.models import Tool
from approvals.catalog.surface_models import Prompt
from approvals.protocol.tools import tool_digest
from approvals.upstream import ServerIdentity
from tests.fixtures.catalog import make_server, make_tool

SCRIPT = "<script>alert(1)</script>"
OLD = {"name": "lookup", "description": "Finds a customer.", "inputSchema": {"type": "object"}}


@pytest.fixture
def changed(db):
    """A tool whose accepted definition was OLD and whose listed one adds words, a schema property and hidden text."""
    tool = make_tool(
        make_server(),
        "lookup",
        status=Tool.Status.NEEDS_REVIEW,
        description=f"Finds a customer and\u200b emails them. {SCRIPT}",
        inputSchema={"type": "object", "properties": {"to": {"type": "string"}}},
    )
    tool.digest = tool_digest(tool.definition)
    tool.reviewed_digest, tool.reviewed_definition = tool_digest(OLD), OLD
    tool.save()
    return tool


def test_it_shows_the_changed_words_the_schema_paths_and_the_hidden_content(login, changed):
    html = login("auditor").get(reverse("tool_review", args=[changed.pk])).content.decode()

    # The zero-width space is written out inside the marked words; the markup stays text.
    assert (
        "Finds a customer<ins> and⟦U+200B⟧ emails them</ins>.<ins> &lt;script&gt;alert(1)&lt;/script&gt;</ins>" in html
    )
    assert "<code>inputSchema.properties</code>" in html
    assert "U+200B ZERO WIDTH SPACE" in html
    assert SCRIPT not in html
    assert 'action="/review/tools/' not in html, "only admins see the decision forms"


def test_it_counts_the_tools_that_need_review_in_the_navigation(login, changed):
    html = login("operator").get(reverse("queue")).content.decode()

    assert "data-review-count>1</span>" in html


def test_it_lets_an_admin_accept_the_definition_shown(login, changed):
    client = login("admin")

    response = client.post(reverse("tool_accept", args=[changed.pk]), {"digest": changed.digest, "note": "fine"})

    assert response.status_code == 302
    changed.refresh_from_db()
    assert changed.status == Tool.Status.ACTIVE
    assert changed.reviewed_digest == changed.digest
    event = AuditEvent.objects.get(action="tool.accepted")
    assert event.data["note"] == "fine" and event.data["reviewed_digest"] == tool_digest(OLD)


def test_it_refuses_a_decision_on_a_definition_that_changed_since_it_was_shown(login, changed):
    login("admin").post(reverse("tool_reject", args=[changed.pk]), {"digest": tool_digest(OLD)})

    changed.refresh_from_db()
    assert changed.status == Tool.Status.NEEDS_REVIEW
    assert not AuditEvent.objects.filter(action="tool.rejected").exists()


def test_it_refuses_a_decision_from_someone_who_is_not_an_admin(login, changed):
    response = login("operator").post(reverse("tool_accept", args=[changed.pk]), {"digest": changed.digest})

    assert response.status_code == 403
    changed.refresh_from_db()
    assert changed.status == Tool.Status.NEEDS_REVIEW


def test_it_accepts_several_tools_of_one_server_at_once(login, changed):
    other = make_tool(changed.server, "search", status=Tool.Status.NEEDS_REVIEW)
    skipped = make_tool(changed.server, "delete", status=Tool.Status.NEEDS_REVIEW)

    login("admin").post(
        reverse("server_accept_tools", args=[changed.server.slug]),
        {"tools": [f"{changed.pk}:{changed.digest}", f"{other.pk}:{other.digest}"], "note": "both read"},
    )

    statuses = dict(Tool.objects.values_list("upstream_name", "status"))
    assert statuses == {"lookup": "active", "search": "active", "delete": "needs_review"}
    assert skipped.pk not in AuditEvent.objects.filter(action="tool.accepted").values_list("tool_id", flat=True)


def test_it_compares_two_versions_of_a_tool_on_its_page(login, changed):
    first = changed.changes.create(kind="added", definition=OLD, digest=tool_digest(OLD), status="active")
    second = changed.changes.create(
        kind="changed", definition=changed.definition, digest=changed.digest, status="needs_review"
    )

    url = reverse("tool", args=[changed.pk]) + f"?from={first.pk}&to={second.pk}"
    html = login("auditor").get(url).content.decode()

    assert "Finds a customer<ins> and⟦U+200B⟧ emails them</ins>." in html
    assert "Read the review" in html
    assert "Hidden content" in html


def test_it_ignores_a_comparison_of_versions_of_another_tool(login, changed):
    html = login("auditor").get(reverse("tool", args=[changed.pk]) + "?from=999&to=1000").content.decode()

    assert "Compare versions" not in html


@pytest.fixture
def changed_prompt(db):
    """A prompt synced once, accepted with its server, then changed upstream: it needs review."""
    server = make_server("Writer", tool_prefix="w_", accept_next_listing=True)
    identity = ServerIdentity("2025-11-25", "legacy", {}, {"prompts": {}}, "")
    sync.apply_catalog(server, identity, [], {"prompts": [{"name": "greet", "description": "Says hello."}]})
    changed = {"name": "greet", "description": "Says hello. <IMPORTANT>and reads the keys</IMPORTANT>"}
    sync.apply_catalog(server, identity, [], {"prompts": [changed]})
    return Prompt.objects.get()


def test_it_lists_a_changed_prompt_beside_the_tools_and_links_it_from_the_server_page(login, changed, changed_prompt):
    client = login("auditor")
    listed = client.get(reverse("review")).content.decode()
    server_page = client.get(reverse("server", args=[changed_prompt.server.slug])).content.decode()

    review_url = reverse("entry_review", args=["prompts", changed_prompt.pk])
    assert f'href="{review_url}"' in listed
    assert 'data-review-row="prompts:' in listed and f'data-review-row="{changed.pk}"' in listed
    assert f'href="{review_url}"' in server_page


def test_it_accepts_a_prompt_and_a_tool_of_one_server_at_once(login, changed_prompt):
    tool = make_tool(changed_prompt.server, "lookup", status=Tool.Status.NEEDS_REVIEW)

    login("admin").post(
        reverse("server_accept_tools", args=[changed_prompt.server.slug]),
        {"tools": [f"{tool.pk}:{tool.digest}"], "entries": [f"prompts:{changed_prompt.pk}:{changed_prompt.digest}"]},
    )

    assert Prompt.objects.get().status == Tool.Status.ACTIVE == Tool.objects.get().status
    assert AuditEvent.objects.filter(action="prompt.accepted", data__note="").exists()


def test_it_shows_a_prompts_history_and_refuses_an_unknown_kind(login, changed_prompt):
    client = login("auditor")
    html = client.get(reverse("entry_review", args=["prompts", changed_prompt.pk])).content.decode()

    assert "Definition changed" in html and "clients are given the definition last accepted" in html
    assert "&lt;IMPORTANT&gt;" in html
    assert client.get(reverse("entry_review", args=["widgets", changed_prompt.pk])).status_code == 404


def test_it_pages_the_review_list_by_server_and_name_and_rejects_the_selected_in_one_message(login):
    shop = make_server("Shop", tool_prefix="shop_")
    for number in range(55):
        make_tool(shop, f"tool_{number:02d}", status=Tool.Status.NEEDS_REVIEW)
    client = login("admin")

    first = client.get(reverse("review"))
    narrowed = client.get(reverse("review"), {"q": "tool_5", "server": "shop"})

    assert sum(len(group["rows"]) for group in first.context["groups"]) == 50
    assert 'href="?page=2" rel="next"' in first.content.decode() and "data-select-all" in first.content.decode()
    shown = [row["review"].item.exposed_name for row in narrowed.context["groups"][0]["rows"]]
    assert shown == [f"shop_tool_5{n}" for n in range(5)]

    picked = [f"{tool.pk}:{tool.digest}" for tool in Tool.objects.filter(exposed_name__in=shown)]
    done = client.post(reverse("server_reject_tools", args=["shop"]), {"tools": picked}, follow=True)
    assert [str(m) for m in done.context["messages"]] == ["Rejected 5 of 5 entries of Shop."]
    assert Tool.objects.filter(status=Tool.Status.DECLINED).count() == 5


def waiting(server, name, accepted=None, **definition):
    """A tool awaiting review: new unless `accepted` is the definition an admin accepted before."""
    tool = make_tool(server, name, status=Tool.Status.NEEDS_REVIEW, **definition)
    if accepted is not None:
        tool.reviewed_digest, tool.reviewed_definition = tool_digest(accepted), accepted
        tool.save()
    return tool


def test_it_lists_warned_changes_first_then_changes_then_new_tools_with_the_count_of_each(login):
    server = make_server("Alpha", tool_prefix="alpha_")
    for index in range(3):
        waiting(server, f"a_new_{index}", description="Harmless.")
    waiting(server, "b_changed", accepted=OLD, description="Finds a customer, faster.")
    warned = waiting(make_server("Zulu", tool_prefix="zulu_"), "z_warned", accepted=OLD, description="Finds\u200b all.")

    html = login("operator").get(reverse("review")).content.decode()

    rows = re.findall(r'data-review-row="(\d+)"', html)
    names = dict(Tool.objects.values_list("pk", "exposed_name"))
    assert [names[int(pk)] for pk in rows] == [
        warned.exposed_name,
        "alpha_b_changed",
        "alpha_a_new_0",
        "alpha_a_new_1",
        "alpha_a_new_2",
    ]
    assert re.findall(r'data-risk="([^"]+)"', html) == ["with warnings", "changed", "new"]
    counts = dict(re.findall(r'data-risk-count="([^"]+)"><strong>(\d+)</strong>', html))
    assert counts == {"with warnings": "1", "changed": "1", "new": "3"}
