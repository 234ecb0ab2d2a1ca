"""Risk on the row: a chip and an edge colour from a trusted server's annotations, each named in the panel."""

import pytest
from django.urls import reverse

from approvals import roles
from approvals.catalog.models import Server
from approvals.display.risk import call_risk
from tests.fixtures.catalog import make_tool


@pytest.mark.parametrize(
    ("hints", "level", "label", "open_world"),
    [
        ({"destructiveHint": True, "readOnlyHint": False}, "destructive", "destructive", False),
        ({"readOnlyHint": True}, "read", "read-only", False),
        ({"readOnlyHint": True, "openWorldHint": True}, "read", "read-only", True),
        ({"destructiveHint": False}, "write", "may write", False),
        (None, "write", "unannotated", False),
        ({"readOnlyHint": "yes"}, "write", "unannotated", False),
    ],
)
def test_it_reads_the_risk_from_a_trusted_server_s_annotations(shop, make_call, hints, level, label, open_world):
    Server.objects.filter(pk=shop.pk).update(trusted=True)
    definition = {} if hints is None else {"annotations": hints}
    call = make_call(make_tool(shop, "tool", **definition), {})
    call.server.refresh_from_db()
    risk = call_risk(call)
    assert (risk.level, risk.label, risk.open_world) == (level, label, open_world)
    assert [hint.name for hint in risk.annotations] == [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ]


def test_it_calls_every_tool_of_an_untrusted_server_unverified(shop, make_call):
    call = make_call(make_tool(shop, "reader", annotations={"readOnlyHint": True}), {})
    risk = call_risk(call)
    assert (risk.level, risk.label) == ("unverified", "unverified")
    assert [(hint.label, hint.value, hint.declared) for hint in risk.annotations][0] == ("read-only", True, True)


def test_it_shows_the_chip_on_the_row_and_each_annotation_by_name_in_the_panel(person, shop, refund_call):
    Server.objects.filter(pk=shop.pk).update(trusted=True)
    _, client = person("pat", roles.OPERATOR)
    page = client.get(reverse("queue")).content.decode()
    assert 'class="call-row status-pending risk-destructive' in page
    assert '<span class="badge risk risk-destructive" data-risk>destructive</span>' in page
    for name in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
        assert f"<code>{name}</code>" in page
    assert "(not declared: the spec's default)" in page
