import pytest

from approvals import roles


@pytest.fixture
def admin_client(login):
    return login(roles.ADMIN)


@pytest.fixture
def operator_client(login):
    return login(roles.OPERATOR)
