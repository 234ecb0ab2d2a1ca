"""Clients without a token: refused, unless the admin allows them on a console only this machine reaches."""

import pytest
from django.test import RequestFactory

from approvals.audit.models import AuditEvent
from approvals.gateway import auth
from approvals.gateway.http import Refused
from tests.fixtures.processes import start_console


def test_it_refuses_a_client_without_a_token_by_default(tokenless):
    assert tokenless.modern("tools/list").status_code == 401


def test_it_lets_a_local_client_without_a_token_in_as_the_anonymous_token_when_allowed(tokenless, settings):
    settings.ALLOW_ANONYMOUS_CLIENTS = True

    response = tokenless.modern("tools/list")

    assert response.status_code == 200
    assert AuditEvent.objects.get(action="tools.listed").actor_name == "anonymous"


def test_it_still_refuses_a_wrong_token_when_anonymous_clients_are_allowed(tokenless, settings):
    settings.ALLOW_ANONYMOUS_CLIENTS = True

    response = tokenless.modern("tools/list", headers={"Authorization": "Bearer mcpc_wrong"})

    assert response.status_code == 401


@pytest.mark.parametrize(
    "header",
    [{"X-Forwarded-For": "127.0.0.1"}, {"X-Real-IP": "127.0.0.1"}, {"Forwarded": "for=127.0.0.1"}],
    ids=["X-Forwarded-For", "X-Real-IP", "Forwarded"],
)
def test_it_refuses_an_anonymous_client_that_came_through_a_proxy_whatever_address_it_names(
    tokenless, settings, header
):
    settings.ALLOW_ANONYMOUS_CLIENTS = True

    response = tokenless.modern("tools/list", headers={"Host": "localhost", **header})

    assert response.status_code == 401
    assert not AuditEvent.objects.filter(action="tools.listed").exists()


async def test_it_refuses_an_anonymous_client_from_another_machine_even_when_allowed(settings):
    settings.ALLOW_ANONYMOUS_CLIENTS = True
    request = RequestFactory().post("/mcp", REMOTE_ADDR="203.0.113.9", HTTP_HOST="localhost")

    with pytest.raises(Refused) as refused:
        await auth.identify(request)

    assert refused.value.response.status_code == 401


def test_it_refuses_to_start_with_anonymous_clients_on_a_public_host_name():
    started = start_console(ALLOW_ANONYMOUS_CLIENTS="1", ALLOWED_HOSTS="localhost,console.example.com")

    assert started.returncode != 0
    assert "ImproperlyConfigured" in started.stderr
    assert "ALLOW_ANONYMOUS_CLIENTS" in started.stderr


def test_it_starts_with_anonymous_clients_when_it_answers_only_loopback_names():
    started = start_console(ALLOW_ANONYMOUS_CLIENTS="1", ALLOWED_HOSTS="localhost,127.0.0.1,[::1]")

    assert started.returncode == 0, started.stderr
