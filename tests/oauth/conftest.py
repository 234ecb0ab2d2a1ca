import pytest

from approvals import roles
from approvals.gateway.auth import forget_requests
from approvals.oauth.models import RoleScope


@pytest.fixture
def registrations_afresh():
    """Every test's clients register from 127.0.0.1, which may register so many a minute: each test starts at 0."""
    forget_requests("oauth-register:127.0.0.1")


@pytest.fixture
def operators_may_grant(db):
    """An admin let operators grant every tool on the consent page; without it their role grants nothing."""
    RoleScope.objects.create(role=roles.OPERATOR, tool_globs=["*"])
