"""The production topology as plain processes: two daphne processes, a celery worker, PostgreSQL and Redis."""

import os
import shlex
import sys
import time

import httpx
import pytest
from django.contrib.auth.models import User

from approvals import servers
from approvals.models import Tool
from console.celery import app
from tests.fixtures.processes import celery_worker, daphne
from tests.fixtures.servers import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_required():
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: the production topology needs Redis")


@pytest.fixture
def tasks_go_to_the_worker(redis_required):
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def logged_in(base_url, username, password):
    client = httpx.Client(base_url=base_url, follow_redirects=True, timeout=10)
    client.get("/login/")
    response = client.post(
        "/login/", data={"username": username, "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]},
        headers={"Referer": f"{base_url}/login/"},
    )
    assert response.url.path != "/login/", "login failed"
    return client


def wait_until(predicate, seconds=30, message="condition"):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"{message} did not happen within {seconds}s")


def test_it_syncs_a_new_server_in_the_worker_and_every_web_process_shows_its_tools(tasks_go_to_the_worker):
    User.objects.create_user("root", password="a long password", is_superuser=True, is_staff=True)
    web = [free_port(), free_port()]
    with celery_worker(), daphne(web[0]), daphne(web[1]):
        server = servers.add_server(
            name="Demo", transport="stdio", command=shlex.join([sys.executable, "-m", "approvals.demo.server"])
        )
        wait_until(lambda: Tool.objects.filter(server=server, status="active").count() >= 5, message="the worker's sync")
        for port in web:
            page = logged_in(f"http://127.0.0.1:{port}", "root", "a long password").get("/catalog/")
            assert page.status_code == 200
            assert "demo_lookup_customer" in page.text and "demo_issue_refund" in page.text
