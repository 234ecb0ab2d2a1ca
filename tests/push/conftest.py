import pytest

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
