import pytest
from django.urls import reverse

from approvals import roles, urls
from tests.fixtures.catalog import make_server
from tests.fixtures.people import PASSWORD, make_user

SIGNING_IN = {"login", "login_local", "sso_start", "sso_callback", "logout"}
# Taking no session: Slack signs what it sends there (tests/slack refuse what it did not sign).
SIGNED_BY_OTHERS = {"slack_interactions"}


def page_url(pattern) -> str:
    kwargs = {
        name: 1 if converter.regex == "[0-9]+" else "records" for name, converter in pattern.pattern.converters.items()
    }
    return reverse(pattern.name, kwargs=kwargs)


@pytest.mark.parametrize(
    "pattern", [p for p in urls.urlpatterns if p.name not in SIGNING_IN | SIGNED_BY_OTHERS], ids=lambda p: p.name
)
def test_it_refuses_every_page_to_a_signed_in_user_who_holds_no_role(login, pattern):
    make_server()
    client = login()
    statuses = {method: getattr(client, method)(page_url(pattern)).status_code for method in ("get", "post")}
    # A page that takes only the other method may say so (405); none may show or do anything.
    assert set(statuses.values()) <= {403, 405} and 403 in statuses.values(), statuses


PAGES = ["servers", "server_add", "catalog"]


@pytest.mark.parametrize("page", PAGES)
def test_it_sends_an_anonymous_visitor_to_the_login_page(client, db, page):
    response = client.get(reverse(page))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_it_sends_an_anonymous_visitor_from_a_server_page_to_the_login_page(client, db):
    make_server()
    response = client.get(reverse("server", args=["records"]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("role", "page"), [(roles.ADMIN, "queue"), (roles.OPERATOR, "queue"), (roles.AUDITOR, "audit")]
)
def test_it_sends_each_role_home_to_the_page_it_works_from(login, role, page):
    response = login(role).get(reverse("home"))
    assert response.status_code == 302 and response["Location"] == reverse(page)


@pytest.mark.parametrize("action", ["server_edit", "server_test", "server_sync"])
def test_it_refuses_a_non_admin_a_server_action_with_403(operator_client, monkeypatch, action):
    make_server()
    monkeypatch.setattr("approvals.catalog.sync.sync_server", lambda server: pytest.fail("sync must not run"))
    monkeypatch.setattr("approvals.catalog.sync.test_connection", lambda server: pytest.fail("test must not run"))
    assert operator_client.post(reverse(action, args=["records"])).status_code == 403


def test_it_refuses_a_non_admin_the_add_form_and_its_post(operator_client):
    assert operator_client.get(reverse("server_add")).status_code == 403
    response = operator_client.post(
        reverse("server_add"), {"name": "Sneaky", "transport": "http", "url": "https://x.example/"}
    )
    assert response.status_code == 403
    assert "Only admins" in response.content.decode()


def test_it_hides_the_admin_buttons_from_a_non_admin(operator_client):
    make_server()
    listing = operator_client.get(reverse("servers")).content.decode()
    detail = operator_client.get(reverse("server", args=["records"])).content.decode()
    assert "Add server" not in listing
    for label in ("Test connection", "Sync now", reverse("server_edit", args=["records"])):
        assert label not in detail


def test_it_shows_the_admin_buttons_to_an_admin(admin_client):
    make_server()
    detail = admin_client.get(reverse("server", args=["records"])).content.decode()
    for label in ("Test connection", "Sync now", reverse("server_edit", args=["records"])):
        assert label in detail


def test_it_refuses_a_get_on_the_sync_action(admin_client):
    make_server()
    assert admin_client.get(reverse("server_sync", args=["records"])).status_code == 405


def sign_in_through_the_form(client, role_names):
    make_user("olga", *role_names)
    page = client.get(reverse("login"))
    assert 'name="password"' in page.content.decode()
    return client.post(reverse("login"), {"username": "olga", "password": PASSWORD}, follow=True)


def test_it_logs_a_user_in_through_the_login_form_onto_their_roles_page(client, db):
    response = sign_in_through_the_form(client, [roles.OPERATOR])
    assert response.redirect_chain[-1][0] == reverse("queue")
    assert "olga" in response.content.decode()


def test_it_signs_an_auditor_in_onto_the_audit_log_unless_next_says_otherwise(client, db):
    make_user("aude", roles.AUDITOR)
    landed = client.post(reverse("login"), {"username": "aude", "password": PASSWORD}, follow=True)
    assert landed.redirect_chain[-1][0] == reverse("audit")
    client.logout()
    asked = client.post(
        reverse("login") + "?next=" + reverse("catalog"), {"username": "aude", "password": PASSWORD}, follow=True
    )
    assert asked.redirect_chain[-1][0] == reverse("catalog")


def test_it_tells_a_user_who_holds_no_role_after_signing_in_and_shows_nothing_else(client, db):
    response = sign_in_through_the_form(client, [])
    assert response.status_code == 403
    assert "holds no role" in response.content.decode()


def test_it_offers_a_user_who_holds_no_role_no_link_to_a_page_that_would_refuse_them_too(client, db):
    page = sign_in_through_the_form(client, []).content.decode()
    refusing = ["servers", "catalog", "review", "connect", "account"]
    assert [name for name in refusing if f'href="{reverse(name)}"' in page] == []
    assert "log out" in page and f'action="{reverse("logout")}"' in page


def test_it_leads_a_user_refused_for_their_role_back_to_the_pages_they_may_see(operator_client):
    page = operator_client.get(reverse("server_add")).content.decode()
    assert 'class="mainnav"' in page and f'href="{reverse("servers")}">Back to the servers' in page
