import contextlib

import pytest

from approvals.webhooks import endpoints
from console.celery import app
from tests.fixtures.processes import celery_worker
from tests.webhooks.receiver import Receiver

# Quick retries for the tests, and a wait long enough that a hanging receiver outlasts the test's call.
FAST = {"WEBHOOK_RETRY_SECONDS": "0.2", "WEBHOOK_TIMEOUT_SECONDS": "20"}


@pytest.fixture(scope="module")
def worker(django_db_setup):
    """A celery worker for the module's tests that want one, started by the first of them."""
    with contextlib.ExitStack() as stack:
        started = []

        def start():
            if not started:
                started.append(stack.enter_context(celery_worker(FAST)))

        yield start


@pytest.fixture(params=["inline", pytest.param("worker", marks=[pytest.mark.postgres, pytest.mark.redis])])
def sending(request, settings, transactional_db):
    """Deliveries sent by this process's threads (embedded), or by a celery worker on PostgreSQL and Redis."""
    settings.WEBHOOK_RETRY_SECONDS = float(FAST["WEBHOOK_RETRY_SECONDS"])
    settings.WEBHOOK_TIMEOUT_SECONDS = float(FAST["WEBHOOK_TIMEOUT_SECONDS"])
    if request.param == "inline":
        yield request.param
        return
    request.getfixturevalue("worker")()
    app.conf.task_always_eager = False
    try:
        yield request.param
    finally:
        app.conf.task_always_eager = True


@pytest.fixture
def receiver():
    made = []

    def make(*answers, hang=False):
        made.append(Receiver(answers, hang=hang))
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.fixture
def endpoint(transactional_db):
    """Adds an endpoint for `url` wanting `events`, as an admin would; (endpoint, secret)."""
    from tests.fixtures.people import make_user

    admin = make_user("hook-admin", superuser=True)

    def add(url, events=("call.pending", "call.decided"), slack=False):
        fields = {
            "url": url,
            "description": "",
            "events": list(events),
            "slack": slack,
            "enabled": True,
            "console_url": "http://console.test/",
        }
        return endpoints.create_endpoint(fields, admin)

    return add
