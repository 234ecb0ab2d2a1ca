from django.contrib.auth.models import User


def test_it_shows_calls_and_input_requests_to_admins_but_lets_nobody_change_them(client, db):
    User.objects.create_superuser("root", password="pw-long-enough")
    client.login(username="root", password="pw-long-enough")
    for model in ("call", "inputrequest", "toolchange"):
        assert client.get(f"/admin/approvals/{model}/").status_code == 200
        assert client.get(f"/admin/approvals/{model}/add/").status_code == 403


def test_it_offers_https_for_a_url_typed_without_a_scheme(client, db):
    User.objects.create_superuser("root", password="pw-long-enough")
    client.login(username="root", password="pw-long-enough")
    page = client.get("/admin/approvals/server/add/")
    assert page.status_code == 200
    assert page.context["adminform"].form.fields["url"].assume_scheme == "https"
