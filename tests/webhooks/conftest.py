import pytest
from django.db.models import Sum

from approvals.webhooks import endpoints
from approvals.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from console.celery import app
from tests.fixtures.processes import worker_on_demand
from tests.fixtures.waiting import wait_until
from tests.webhooks.receiver import Receiver

# Quick retries for the tests, and a wait long enough that a hanging receiver outlasts the test's call.
FAST = {"WEBHOOK_RETRY_SECONDS": "0.2", "WEBHOOK_TIMEOUT_SECONDS": "20"}


@pytest.fixture(scope="module")
def worker(django_db_setup):
    """A celery worker for the module's tests that want one, started by the first of them."""
    with worker_on_demand(FAST) as start:
        yield start


@pytest.fixture(params=["inline", pytest.param("worker", marks=[pytest.mark.postgres, pytest.mark.redis])])
def sending(request, settings, transactional_db):
    """Deliveries sent by this process's threads (embedded), or by a celery worker on PostgreSQL and Redis."""
    settings.WEBHOOK_RETRY_SECONDS = float(FAST["WEBHOOK_RETRY_SECONDS"])
    settings.WEBHOOK_TIMEOUT_SECONDS = float(FAST["WEBHOOK_TIMEOUT_SECONDS"])
    if request.param == "inline":
        yield request.param
        settle_deliveries()
        return
    request.getfixturevalue("worker")()
    app.conf.task_always_eager = False
    try:
        yield request.param
        settle_deliveries()
    finally:
        app.conf.task_always_eager = True


def settle_deliveries():
    """No further attempts, and those under way recorded: a retry writing while the tables are flushed deadlocks."""
    WebhookEndpoint.objects.update(enabled=False)

    def settled():
        claimed = WebhookDelivery.objects.aggregate(n=Sum("attempts"))["n"] or 0
        return claimed == WebhookAttempt.objects.count()

    wait_until(settled, timeout=30, message="the attempts under way recorded")


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
