"""Liveness and readiness for whatever supervises the process: /healthz and /readyz.

/healthz says the process answers and touches nothing else, so a slow database never
gets a healthy web process restarted. /readyz says whether it can serve: the database
answers a query, every migration is applied, a message sent on the channel layer comes
back, the celery broker accepts a connection, and CREDENTIALS_KEY decrypts the stored
credentials. It says nothing of the SIEM: anyone may ask, and where audit events go, and
whether they are getting there, is for staff (the audit page) and scrapers (/metrics).
Each check is named in the JSON body with its outcome; any failure makes the answer 503.
A failure shows only the exception's class (the full error goes to the log): a database
error's text names hosts and roles.

Both are answered by a middleware ahead of Django's Host check, because a probe from
inside a container or an orchestrator names an address rather than a host in
ALLOWED_HOSTS, and neither answer uses the Host or says anything worth forging it for.
"""

import asyncio
import logging
import secrets

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponseNotAllowed, JsonResponse

from approvals.db.sealed import CredentialsUnreadable, check_readable

logger = logging.getLogger(__name__)

ROUND_TRIP_SECONDS = 3.0


class NotReady(Exception):
    """A check's own finding, worded for the response."""


def database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def migrations():
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        raise NotReady("not applied: " + ", ".join(f"{m.app_label}.{m.name}" for m, _backwards in plan))


def channel_layer():
    async_to_sync(channel_layer_round_trip)()


async def channel_layer_round_trip():
    layer = get_channel_layer()
    channel = await layer.new_channel(prefix="readiness.")
    nonce = secrets.token_hex(8)
    await layer.send(channel, {"type": "readiness.probe", "nonce": nonce})
    try:
        async with asyncio.timeout(ROUND_TRIP_SECONDS):
            message = await layer.receive(channel)
    finally:
        await leave(layer, channel)
    if message.get("nonce") != nonce:
        raise NotReady("the channel layer gave back another message")


async def leave(layer, channel):
    # A layer forgets a channel when a receive on it is cancelled, which is how a consumer
    # leaves; without this each probe would keep a Redis subscription open for good.
    receiving = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0)
    receiving.cancel()
    await asyncio.gather(receiving, return_exceptions=True)


def broker():
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "tasks run inline in each process: there is no broker to reach"
    from console.celery import app

    with app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=ROUND_TRIP_SECONDS) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0)
    return None


def credentials():
    try:
        check_readable()
    except CredentialsUnreadable as exc:
        raise NotReady(str(exc)) from None


READINESS = {
    "database": database,
    "migrations": migrations,
    "channel_layer": channel_layer,
    "broker": broker,
    "credentials": credentials,
}


def outcome(name, check) -> dict:
    try:
        detail = check()
    except NotReady as finding:
        return {"ok": False, "error": str(finding)}
    except Exception as error:
        logger.warning("readiness check %s failed", name, exc_info=True)
        return {"ok": False, "error": type(error).__name__}
    return {"ok": True, "detail": detail} if detail else {"ok": True}


def readiness() -> dict[str, dict]:
    return {name: outcome(name, check) for name, check in READINESS.items()}


def healthz(request):
    return answer(200, {"status": "alive"})


def readyz(request):
    checks = readiness()
    failed = [name for name, result in checks.items() if not result["ok"]]
    if failed:
        return answer(503, {"status": "not ready", "failed": failed, "checks": checks})
    return answer(200, {"status": "ready", "checks": checks})


def answer(status, body) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"
    return response


PROBES = {"/healthz": healthz, "/readyz": readyz}


def probes(get_response):
    """Answer the probe paths before any middleware that checks the Host or reads a session."""

    def middleware(request):
        probe = PROBES.get(request.path_info)
        if probe is None:
            return get_response(request)
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return probe(request)

    return middleware
