import pytest
from django.urls import reverse

from tests.pages.factories import make_server

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


def test_it_redirects_home_to_the_servers_page(operator_client):
    response = operator_client.get(reverse("home"))
    assert response.status_code == 302 and response["Location"] == reverse("servers")


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


def test_it_logs_a_user_in_through_the_login_form(client, django_user_model, db):
    django_user_model.objects.create_user(username="olga", password="a long enough test password")
    page = client.get(reverse("login"))
    assert 'name="password"' in page.content.decode()
    response = client.post(
        reverse("login"), {"username": "olga", "password": "a long enough test password"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("servers")
    assert "olga" in response.content.decode()
