import pytest
from django.contrib.auth.models import Group

from approvals import roles

PASSWORD = "a long enough test password"


@pytest.fixture
def login(client, django_user_model, db):
    """Signs the test client in as a new user holding the given roles."""

    def sign_in(*role_names, username=None):
        roles.ensure_roles()
        user = django_user_model.objects.create_user(
            username=username or "-".join(role_names) or "nobody", password=PASSWORD
        )
        user.groups.set(Group.objects.filter(name__in=role_names))
        client.force_login(user)
        return client

    return sign_in


@pytest.fixture
def admin_client(login):
    return login(roles.ADMIN)


@pytest.fixture
def operator_client(login):
    return login(roles.OPERATOR)
