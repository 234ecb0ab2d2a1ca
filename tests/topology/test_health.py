"""/healthz and /readyz: what a supervisor asks a web process, answered to anyone and naming what failed."""

import json

import pytest
from channels.layers import InMemoryChannelLayer, channel_layers
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from console import health
from tests.fixtures.catalog import make_server

SECRET_IN_ERROR = "redis://:hunter2@10.0.0.9:6379/0"


class UnreachableLayer(InMemoryChannelLayer):
    async def send(self, channel, message):
        raise ConnectionError(f"Error connecting to {SECRET_IN_ERROR}")


def readiness(client):
    response = client.get("/readyz", HTTP_HOST="10.0.0.7:8000")
    return response.status_code, json.loads(response.content)


@pytest.fixture
def broken_channel_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": f"{__name__}.UnreachableLayer"}}
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def test_it_answers_healthz_without_the_database_or_a_known_host(client):
    # No db fixture: a query here would fail the test.
    response = client.get("/healthz", HTTP_HOST="10.0.0.7:8000")
    assert response.status_code == 200
    assert json.loads(response.content) == {"status": "alive"}
    assert response["Cache-Control"] == "no-store"


def test_it_is_ready_when_every_check_passes_and_says_inline_tasks_have_no_broker(client, db, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    status, body = readiness(client)
    assert status == 200, body
    assert body["status"] == "ready"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True,
        "migrations": True,
        "channel_layer": True,
        "broker": True,
        "credentials": True,
    }
    assert "no broker" in body["checks"]["broker"]["detail"]


def test_it_is_not_ready_when_the_channel_layer_fails_and_keeps_the_error_text_to_itself(
    client, db, broken_channel_layer
):
    status, body = readiness(client)
    assert status == 503
    assert body["failed"] == ["channel_layer"]
    assert body["checks"]["channel_layer"] == {"ok": False, "error": "ConnectionError"}
    assert "hunter2" not in json.dumps(body)


def test_it_is_not_ready_while_a_migration_is_unapplied(client, db):
    recorder = MigrationRecorder(connection)
    latest = max(name for app, name in recorder.applied_migrations() if app == "approvals")
    recorder.record_unapplied("approvals", latest)
    status, body = readiness(client)
    assert status == 503
    assert body["failed"] == ["migrations"]
    assert body["checks"]["migrations"]["error"] == f"not applied: approvals.{latest}"


def test_it_is_not_ready_when_credentials_key_cannot_decrypt_the_stored_credentials(client, db, settings):
    make_server("Tracker", headers={"Authorization": "Bearer in-the-database"})
    settings.CREDENTIALS_KEY = "not the key they were sealed with"
    status, body = readiness(client)
    assert status == 503
    assert body["failed"] == ["credentials"]
    assert "cannot be decrypted with the configured CREDENTIALS_KEY" in body["checks"]["credentials"]["error"]


def test_it_is_not_ready_when_the_broker_refuses_connections(client, db, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    status, body = readiness(client)
    assert status == 503
    assert body["failed"] == ["broker"]
    assert body["checks"]["broker"]["ok"] is False


def test_it_answers_probes_to_get_only(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.redis
async def test_it_leaves_no_redis_subscription_behind(settings):
    import redis.asyncio

    # Within one event loop, as in a web process, where the layer lives as long as the process.
    await health.channel_layer_round_trip()
    client = redis.asyncio.Redis.from_url(settings.REDIS_URL)
    assert await client.pubsub_channels("*readiness.*") == []
    await client.aclose()
