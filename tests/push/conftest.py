import pytest
from django.conf import settings as django_settings

from console.celery import app
from tests.fixtures.processes import worker_on_demand
from tests.push.service import PushService


@pytest.fixture
def push_service(settings):
    """Push services on 127.0.0.1 (the console may reach them: listed in WEB_PUSH_ALLOWED_HOSTS); `make(*answers)`."""
    settings.WEB_PUSH_ALLOWED_HOSTS = ["127.0.0.1"]
    made = []

    def make(*answers):
        made.append(PushService(answers))
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.fixture(scope="module")
def worker(django_db_setup):
    """A celery worker for the module's tests that want one, started by the first of them, with this process's key."""
    with worker_on_demand(
        {"WEB_PUSH_ALLOWED_HOSTS": "127.0.0.1", "WEB_PUSH_VAPID_KEY": django_settings.WEB_PUSH_VAPID_KEY}
    ) as start:
        yield start


@pytest.fixture(params=["inline", pytest.param("worker", marks=[pytest.mark.postgres, pytest.mark.redis])])
def sending(request, transactional_db):
    """Notifications sent by this process's threads (embedded), or by a celery worker on PostgreSQL and Redis."""
    if request.param == "inline":
        yield request.param
        return
    request.getfixturevalue("worker")()
    app.conf.task_always_eager = False
    try:
        yield request.param
    finally:
        app.conf.task_always_eager = True
