"""Suite-wide rules.

On a newcomer's machine a test that needs an absent tool (Chromium, Node,
PostgreSQL) is skipped with the reason. Under CI (CI=true) every such skip is a
failure: .ci/run installs or starts what the suite needs.
"""

import atexit
import os
import shutil
import tempfile

import pytest

# Fixtures more than one folder of tests uses; a folder's own stay in its conftest.py.
# A plugin other plugins import comes before them, so that pytest rewrites its asserts.
pytest_plugins = [
    "tests.fixtures.waiting",
    "tests.fixtures.servers",
    "tests.fixtures.catalog",
    "tests.fixtures.gateway",
    "tests.fixtures.live",
    "tests.fixtures.people",
    "tests.fixtures.tokens",
]

ON_CI = os.environ.get("CI", "").lower() == "true"

# The run's metric files (approvals.observe.metrics) in a folder of its own, which the processes tests start inherit.
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="console-metrics-")
atexit.register(shutil.rmtree, os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)


def using_postgres():
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


def pytest_collection_modifyitems(config, items):
    # PostgreSQL-only and Redis-only tests belong to the services pass of `make test`, SQLite-only
    # ones to the embedded pass; in the other pass they are left out rather than skipped.
    missing = {"postgres": not using_postgres(), "redis": not os.environ.get("REDIS_URL"), "sqlite": using_postgres()}
    kept, left_out = [], []
    for item in items:
        needs_missing = any(item.get_closest_marker(name) for name, absent in missing.items() if absent)
        (left_out if needs_missing else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
        print(
            f"\n{len(left_out)} tests left for the other pass of `make test`: PostgreSQL-only and Redis-only"
            " ones run with DATABASE_URL and REDIS_URL set, SQLite-only ones without"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if ON_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where nothing may be missing: {reason}"


@pytest.fixture(autouse=True, scope="session")
def tasks_run_inline():
    # Tests that need a real worker start one and switch this off for themselves;
    # elsewhere a task sent to Redis with no worker would never run.
    from console.celery import app

    app.conf.task_always_eager = True
    yield


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    yield
    # Threads that served async tests and live servers keep connections the test
    # process cannot close from here; PostgreSQL refuses to drop a database in use.
    if using_postgres():
        from django.db import connection

        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.fixture(autouse=True, scope="session")
def flush_past_the_audit_triggers():
    """Empty tables between transactional tests as their owner may: with the audit triggers off.

    On PostgreSQL the audit tables refuse TRUNCATE, which is how Django empties every table
    after a transactional test. The suite connects as a superuser, who may switch triggers
    off for a transaction (session_replication_role), as the tables' owner could.
    """
    if not using_postgres():
        yield
        return
    from django.db.backends.postgresql.operations import DatabaseOperations

    sql_flush = DatabaseOperations.sql_flush

    def flush_without_triggers(self, style, tables, **options):
        statements = sql_flush(self, style, tables, **options)
        return ["SET LOCAL session_replication_role = replica", *statements] if statements else statements

    DatabaseOperations.sql_flush = flush_without_triggers
    yield
    DatabaseOperations.sql_flush = sql_flush


@pytest.fixture(autouse=True)
def no_audit_witness():
    # The witness lives outside the database, which every test rolls back: a head one test
    # verified would be missing from the next test's chain.
    from django.core.cache import caches

    from approvals.audit import witness

    caches["audit_witness"].delete(witness.key())
    yield
    caches["audit_witness"].delete(witness.key())


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    # A Redis channel layer ties its receiving state to the event loop that first
    # receives; every async test runs in a loop of its own.
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
