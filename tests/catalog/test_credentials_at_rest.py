"""Credentials are encrypted in the database under CREDENTIALS_KEY: servers' headers and environment, webhooks'
secrets, and what the console keeps as an OAuth client of upstream servers (client secrets, private keys, access and
refresh tokens, PKCE verifiers)."""

import io
import json
import shutil
import subprocess
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from approvals.catalog.models import Server
from approvals.db.sealed import CredentialsUnreadable, configured_keys
from approvals.upstream_oauth.models import UpstreamAuthorization, UpstreamClient, UpstreamGrant
from approvals.webhooks.models import WebhookEndpoint
from tests.fixtures.catalog import make_server
from tests.fixtures.people import make_user

HEADER_VALUE = "Bearer hdr-7c1f0e-distinctive"
ENV_VALUE = "env-4b9d2a-distinctive"
WEBHOOK_SECRET = "whsec_webhook-2e8a55-distinctive"
CLIENT_SECRET = "client-secret-91d3c7-distinctive"
PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nkey-5e0b18-distinctive\n-----END PRIVATE KEY-----"
ACCESS_TOKEN = "access-token-3fa6d0-distinctive"
REFRESH_TOKEN = "refresh-token-c2e94b-distinctive"
PERSON_ACCESS_TOKEN = "person-access-token-8b1e72-distinctive"
CODE_VERIFIER = "code-verifier-60af3d-distinctive"
CLEAR_VALUES = (
    HEADER_VALUE,
    ENV_VALUE,
    WEBHOOK_SECRET,
    CLIENT_SECRET,
    PRIVATE_KEY,
    ACCESS_TOKEN,
    REFRESH_TOKEN,
    PERSON_ACCESS_TOKEN,
    CODE_VERIFIER,
)
# The fragments that stay distinctive once a serializer escapes the private key's line breaks.
MARKERS = tuple(value.split("\n")[1] if "\n" in value else value for value in CLEAR_VALUES)

# The migration that seals the columns, and the one before it.
PLAIN, SEALED = ("approvals", "0007_oauth"), ("approvals", "0008_sealed_credentials")


def make_secrets():
    http = make_server("Tracker", headers={"Authorization": HEADER_VALUE})
    stdio = make_server(
        "Local", transport=Server.Transport.STDIO, url="", command="local-mcp", env={"API_TOKEN": ENV_VALUE}
    )
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example/in", console_url="https://console.example", events=[], secret=WEBHOOK_SECRET
    )
    make_oauth_secrets(http)
    return http, stdio, endpoint


def make_oauth_secrets(server):
    """The console as an OAuth client of `server`: its registration, a shared and a person's grant, a flow under way."""
    UpstreamClient.objects.create(
        server=server, client_id="console", client_secret=CLIENT_SECRET, private_key=PRIVATE_KEY
    )
    UpstreamGrant.objects.create(
        server=server, access_token=ACCESS_TOKEN, refresh_token=REFRESH_TOKEN, status=UpstreamGrant.Status.CONNECTED
    )
    UpstreamGrant.objects.create(server=server, user=make_user("dana"), access_token=PERSON_ACCESS_TOKEN)
    UpstreamAuthorization.objects.create(
        state_digest="0" * 64,
        server=server,
        code_verifier=CODE_VERIFIER,
        redirect_uri="https://console.example/oauth/upstream/callback",
        expires_at=timezone.now() + timedelta(minutes=10),
    )


def stored(model, column):
    """The column's values as the database holds them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {model._meta.db_table}")
        return [value for (value,) in cursor.fetchall()]


def sealed_by_0008():
    """What the migration that sealed the first credentials encrypted."""
    return [*stored(Server, "headers"), *stored(Server, "env"), *stored(WebhookEndpoint, "secret")]


def all_stored():
    oauth = [
        *stored(UpstreamClient, "client_secret"),
        *stored(UpstreamClient, "private_key"),
        *stored(UpstreamGrant, "access_token"),
        *[value for value in stored(UpstreamGrant, "refresh_token") if value is not None],
        *stored(UpstreamAuthorization, "code_verifier"),
    ]
    return [*sealed_by_0008(), *oauth]


@pytest.mark.django_db
def test_it_stores_credentials_encrypted_and_reads_them_plain():
    http, stdio, endpoint = make_secrets()
    first_key = configured_keys()[0][0]
    assert all(value.startswith(f"fernet:{first_key}:") for value in all_stored())
    assert not any(marker in value for value in all_stored() for marker in MARKERS)
    assert Server.objects.get(pk=http.pk).headers == {"Authorization": HEADER_VALUE}
    assert UpstreamClient.objects.get(server=http).client_secret == CLIENT_SECRET
    assert UpstreamGrant.objects.get(server=http, user=None).refresh_token == REFRESH_TOKEN
    assert Server.objects.get(pk=stdio.pk).env == {"API_TOKEN": ENV_VALUE}
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == WEBHOOK_SECRET


@pytest.mark.django_db
def test_it_dumps_no_credential_and_loads_the_dump_back(tmp_path):
    http, stdio, endpoint = make_secrets()
    whole = io.StringIO()
    call_command("dumpdata", stdout=whole)
    assert not any(marker in whole.getvalue() for marker in MARKERS)

    out = io.StringIO()
    call_command("dumpdata", "approvals.server", "approvals.webhookendpoint", stdout=out)
    dump = out.getvalue()
    assert "fernet:" in dump

    Server.objects.all().delete()
    WebhookEndpoint.objects.all().delete()
    fixture = tmp_path / "dump.json"
    fixture.write_text(dump)
    call_command("loaddata", str(fixture), verbosity=0)
    assert Server.objects.get(pk=http.pk).headers == {"Authorization": HEADER_VALUE}
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == WEBHOOK_SECRET


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_leaves_no_credential_in_a_pg_dump():
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        pytest.skip("pg_dump is not installed")
    make_secrets()
    database = connection.settings_dict
    argv = [pg_dump, "--no-owner", "-h", database["HOST"] or "127.0.0.1", "-U", database["USER"]]
    argv += ["-p", str(database["PORT"] or 5432), database["NAME"]]
    dump = subprocess.run(
        argv, env={"PGPASSWORD": database["PASSWORD"] or ""}, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "approvals_webhookendpoint" in dump
    assert "fernet:" in dump
    assert not any(marker in dump for marker in MARKERS)


@pytest.mark.django_db
def test_it_rotates_the_key_and_rewrites_every_value_under_the_new_one(settings):
    settings.CREDENTIALS_KEY = "the old key, long and random enough"
    http, stdio, endpoint = make_secrets()
    old_stored = all_stored()

    settings.CREDENTIALS_KEY = "the new key, long and random enough," + settings.CREDENTIALS_KEY
    assert Server.objects.get(pk=http.pk).headers == {"Authorization": HEADER_VALUE}
    out = io.StringIO()
    call_command("rotate_credentials_key", stdout=out)
    assert "approvals.Server: 2 rows re-encrypted" in out.getvalue()
    assert "approvals.WebhookEndpoint: 1 rows re-encrypted" in out.getvalue()
    assert "approvals.UpstreamGrant: 2 rows re-encrypted" in out.getvalue()
    new_key = configured_keys()[0][0]
    assert all(value.startswith(f"fernet:{new_key}:") for value in all_stored())
    assert not set(all_stored()) & set(old_stored)

    settings.CREDENTIALS_KEY = "the new key, long and random enough"
    assert Server.objects.get(pk=http.pk).headers == {"Authorization": HEADER_VALUE}
    assert Server.objects.get(pk=stdio.pk).env == {"API_TOKEN": ENV_VALUE}
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == WEBHOOK_SECRET
    assert UpstreamGrant.objects.get(server=http, user=None).access_token == ACCESS_TOKEN


@pytest.mark.django_db
def test_it_refuses_to_read_with_the_wrong_key(settings):
    http, _, _ = make_secrets()
    settings.CREDENTIALS_KEY = "not the key they were sealed with"
    with pytest.raises(CredentialsUnreadable, match="cannot be decrypted with the configured CREDENTIALS_KEY"):
        Server.objects.get(pk=http.pk)
    with pytest.raises(CommandError, match="cannot be decrypted.*Nothing was changed"):
        call_command("rotate_credentials_key", stdout=io.StringIO())


@pytest.mark.django_db
def test_it_refuses_a_value_that_fails_its_integrity_check():
    http = make_server("Tracker", headers={"Authorization": HEADER_VALUE})
    tampered = stored(Server, "headers")[0][:-6] + "AAAAAA"
    with connection.cursor() as cursor:
        cursor.execute("UPDATE approvals_server SET headers = %s", [tampered])
    with pytest.raises(CredentialsUnreadable, match="fails its integrity check"):
        Server.objects.get(pk=http.pk)


@pytest.mark.django_db
def test_it_shows_a_page_saying_so_when_the_key_is_wrong(login, settings):
    server = make_server("Tracker", headers={"Authorization": HEADER_VALUE})
    client = login("admin")
    settings.CREDENTIALS_KEY = "not the key they were sealed with"
    response = client.get(f"/servers/{server.slug}/")
    assert response.status_code == 503
    assert b"cannot be decrypted with the configured CREDENTIALS_KEY" in response.content
    assert HEADER_VALUE.encode() not in response.content


@pytest.mark.django_db(transaction=True)
def test_it_migrates_plain_values_to_sealed_ones_and_back():
    executor = MigrationExecutor(connection)
    executor.migrate([PLAIN])
    old = executor.loader.project_state([PLAIN]).apps
    server = old.get_model("approvals", "Server").objects.create(
        name="Tracker", slug="tracker", transport="http", headers={"Authorization": HEADER_VALUE}, env={}
    )
    old.get_model("approvals", "WebhookEndpoint").objects.create(
        url="https://hooks.example/in", console_url="https://console.example", events=[], secret=WEBHOOK_SECRET
    )

    executor = MigrationExecutor(connection)
    executor.migrate([SEALED])
    assert not any(marker in value for value in sealed_by_0008() for marker in MARKERS)
    # The models as they stood then: later migrations add columns the current models read.
    sealed = executor.loader.project_state([SEALED]).apps
    assert sealed.get_model("approvals", "Server").objects.get(pk=server.pk).headers == {"Authorization": HEADER_VALUE}
    assert sealed.get_model("approvals", "WebhookEndpoint").objects.get().secret == WEBHOOK_SECRET

    executor = MigrationExecutor(connection)
    executor.migrate([PLAIN])
    (headers,) = stored(Server, "headers")
    # PostgreSQL's driver hands jsonb back parsed, SQLite the JSON text.
    assert (headers if isinstance(headers, dict) else json.loads(headers)) == {"Authorization": HEADER_VALUE}
    assert stored(WebhookEndpoint, "secret") == [WEBHOOK_SECRET]

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
