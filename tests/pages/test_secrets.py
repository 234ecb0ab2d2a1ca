from django.urls import reverse

from tests.fixtures.catalog import make_server

HEADER_VALUE = "Bearer sk-live-4f9a-very-secret"
ENV_VALUE = "pg-password-77c1"


def pages_of(client, server):
    return {
        "list": client.get(reverse("servers")),
        "detail": client.get(reverse("server", args=[server.slug])),
        "edit": client.get(reverse("server_edit", args=[server.slug])),
    }


def test_it_never_renders_a_header_or_env_value_on_any_server_page(admin_client):
    server = make_server(headers={"Authorization": HEADER_VALUE}, env={"PGPASSWORD": ENV_VALUE})
    for name, response in pages_of(admin_client, server).items():
        html = response.content.decode()
        assert response.status_code == 200, name
        assert HEADER_VALUE not in html and "sk-live" not in html, name
        assert ENV_VALUE not in html, name


def test_it_shows_the_names_of_stored_secrets_with_their_values_hidden(admin_client):
    server = make_server(headers={"Authorization": HEADER_VALUE}, env={"PGPASSWORD": ENV_VALUE})
    for name in ("detail", "edit"):
        html = pages_of(admin_client, server)[name].content.decode()
        assert "Authorization" in html and "PGPASSWORD" in html, name
        assert "value hidden" in html, name


def test_it_does_not_echo_typed_secrets_when_the_form_fails(admin_client):
    response = admin_client.post(
        reverse("server_add"),
        {
            "name": "Records",
            "transport": "http",
            "url": "not a url",
            "headers": f"Authorization: {HEADER_VALUE}",
        },
    )
    assert response.status_code == 200 and response.context["form"].errors
    assert HEADER_VALUE not in response.content.decode()


def test_it_does_not_echo_replacement_secrets_when_the_edit_fails(admin_client):
    server = make_server(headers={"Authorization": "Bearer old"})
    response = admin_client.post(
        reverse("server_edit", args=[server.slug]),
        {
            "name": "",
            "transport": "http",
            "url": server.url,
            "headers": f"Authorization: {HEADER_VALUE}",
        },
    )
    assert response.status_code == 200
    assert HEADER_VALUE not in response.content.decode()
