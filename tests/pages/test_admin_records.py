from approvals.audit.models import AuditEvent
from approvals.policy import rules
from approvals.policy.models import PolicyRule
from approvals.tokens.credentials import create_token
from approvals.tokens.models import ClientToken
from tests.fixtures.people import PASSWORD, make_user


def test_it_shows_calls_and_input_requests_to_admins_but_lets_nobody_change_them(client, db):
    make_user("root", superuser=True)
    client.login(username="root", password=PASSWORD)
    for model in ("call", "inputrequest", "toolchange", "resource", "resourcetemplate", "prompt"):
        assert client.get(f"/admin/approvals/{model}/").status_code == 200
        assert client.get(f"/admin/approvals/{model}/add/").status_code == 403


def test_it_offers_https_for_a_url_typed_without_a_scheme(client, db):
    make_user("root", superuser=True)
    client.login(username="root", password=PASSWORD)
    page = client.get("/admin/approvals/server/add/")
    assert page.status_code == 200
    assert page.context["adminform"].form.fields["url"].assume_scheme == "https"


def test_it_shows_rules_and_tokens_read_only_and_points_to_the_consoles_pages(client, db):
    token, _ = create_token("agent")
    rule = rules.create_rule(rules.RuleRequest("deny", name="no"))
    make_user("root", superuser=True)
    client.login(username="root", password=PASSWORD)
    events = AuditEvent.objects.count()
    for model, obj, page in (("policyrule", rule, "/policy/"), ("clienttoken", token, "/tokens/")):
        listing = client.get(f"/admin/approvals/{model}/")
        assert listing.status_code == 200 and page in listing.content.decode()
        assert client.get(f"/admin/approvals/{model}/add/").status_code == 403
        assert client.post(f"/admin/approvals/{model}/{obj.pk}/delete/", {"post": "yes"}).status_code == 403
        assert client.post(f"/admin/approvals/{model}/{obj.pk}/change/", {"name": "changed"}).status_code == 403
    assert token.token_hash not in client.get(f"/admin/approvals/clienttoken/{token.pk}/change/").content.decode()
    assert PolicyRule.objects.get().name == "no" and ClientToken.objects.get().name == "agent"
    assert AuditEvent.objects.count() == events
