import pytest

from approvals.gateway.auth import forget_requests


@pytest.fixture
def registrations_afresh():
    """Every test's clients register from 127.0.0.1, which may register so many a minute: each test starts at 0."""
    forget_requests("oauth-register:127.0.0.1")
