"""Browser sessions: what a dump of the database gives (issue 40: its session keys answered as admin), the key
changed at every sign-in, and how long a session lasts."""

import importlib
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore as PlainStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.utils import timezone

from approvals import roles, tasks
from approvals.db.models import BrowserSession
from approvals.db.sessions import SessionStore
from tests.fixtures.people import PASSWORD, make_user

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def me_with(session_key) -> int:
    browser = Client()
    browser.cookies[settings.SESSION_COOKIE_NAME] = session_key
    return browser.get("/api/v1/me").status_code


def signed_in(client, username="ada", *role_names):
    make_user(username, *(role_names or [roles.ADMIN]))
    assert client.post("/login/", {"username": username, "password": PASSWORD}).status_code == 302
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def test_it_keeps_no_session_key_a_dump_could_present(client):
    cookie = signed_in(client)
    make_user("olivia", roles.OPERATOR)
    Client().post("/login/", {"username": "olivia", "password": PASSWORD})

    dumped = list(BrowserSession.objects.values_list("session_key", "session_data"))

    assert len(dumped) == 2 and all(cookie not in key and cookie not in data for key, data in dumped)
    assert [me_with(key) for key, _ in dumped] == [401, 401]
    assert me_with(cookie) == 200


def test_it_refuses_the_sessions_kept_under_their_plain_key_before_the_upgrade_and_deletes_them():
    admin = make_user("ada", roles.ADMIN)
    plain = PlainStore()
    plain.update({"_auth_user_id": str(admin.pk), "_auth_user_backend": settings.AUTHENTICATION_BACKENDS[0]})
    plain.update({"_auth_user_hash": admin.get_session_auth_hash()})
    plain.create()

    assert me_with(plain.session_key) == 401
    migration = importlib.import_module("approvals.migrations.0015_person_access")
    # The operation's own work, with no schema editor: SQLite opens none inside the test's transaction.
    editor = SimpleNamespace(connection=connection, execute=lambda sql, params: connection.cursor().execute(sql))
    migration.end_plain_sessions(None, editor)
    assert not Session.objects.exists()


def test_it_changes_the_session_key_at_sign_in(client):
    before = client.session
    before["visited"] = True
    before.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = before.session_key

    after = signed_in(client)

    assert after != before.session_key and not SessionStore().exists(before.session_key)


def test_it_changes_the_session_key_at_an_sso_sign_in(client, idp, sso_sign_in):
    idp.accounts["u-1"] = {"preferred_username": "sam", "groups": ["mcp-operators"]}
    started = client.get("/login/sso/")
    during = client.cookies[settings.SESSION_COOKIE_NAME].value

    client.get(f"/login/sso/callback/?{idp.authorize(started['Location'], 'u-1')}")

    after = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert after != during and not SessionStore().exists(during) and me_with(after) == 200


def test_it_ends_a_session_twelve_hours_after_sign_in(client):
    signed_in(client)

    assert settings.SESSION_COOKIE_AGE == 12 * 3600
    assert client.cookies[settings.SESSION_COOKIE_NAME]["max-age"] == 12 * 3600


def test_it_takes_the_session_s_life_from_the_environment():
    probe = "import django; django.setup(); from django.conf import settings; print(settings.SESSION_COOKIE_AGE)"
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "console.settings", "SESSION_COOKIE_AGE": "3600"}
    found = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "3600"


def test_it_prunes_the_sessions_past_their_expiry(client):
    signed_in(client)
    BrowserSession.objects.create(session_key="0" * 64, session_data="", expire_date=timezone.now())

    tasks.prune_sessions()

    assert BrowserSession.objects.count() == 1 and me_with(client.cookies[settings.SESSION_COOKIE_NAME].value) == 200
