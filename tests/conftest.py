"""Suite-wide rules.

On a newcomer's machine a test that needs an absent tool (Chromium, Node,
PostgreSQL) is skipped with the reason. Under CI (CI=true) every such skip is a
failure: .ci/run installs or starts what the suite needs (tests/fixtures/passes.py).

`make test` runs the suite embedded, then on PostgreSQL and Redis, where only the tests of
code that behaves differently on them run (tests/fixtures/passes.py; tests/test_services_pass.py
checks that every module taking locks, writing SQL or reaching the channel layer, the cache or
celery has such tests). A test that reaches the channel layer, the cache or celery without the
database and without a marker fails, saying which marker it lacks.
"""

import atexit
import os
import shutil
import tempfile
import threading

import pytest

# Imported here, before pytest_plugins would load it: pytest rewrites its asserts only if asked before the import.
pytest.register_assert_rewrite("tests.fixtures.passes")
from tests.fixtures.passes import uses_services, using_postgres  # noqa: E402

# Fixtures more than one folder of tests uses; a folder's own stay in its conftest.py.
# A plugin other plugins import comes before them, so that pytest rewrites its asserts.
pytest_plugins = [
    "pytester",
    "tests.fixtures.time_limits",
    "tests.fixtures.internal_errors",
    "tests.fixtures.passes",
    "tests.fixtures.databases",
    "tests.fixtures.waiting",
    "tests.fixtures.servers",
    "tests.fixtures.catalog",
    "tests.fixtures.gateway",
    "tests.fixtures.live",
    "tests.fixtures.people",
    "tests.fixtures.tokens",
    "tests.fixtures.oidc_provider",
]

# Settings for every test, which the consoles and workers tests start inherit, and test_settings gives the
# settings already loaded here: webhook receivers and upstream authorization servers listen on loopback (over
# plain http), which a console refuses unless listed;
# a server's list changes sync at once, each test's servers taking the pks of the last test's;
# and a client following a call as a task polls it often, the test's operator deciding at once.
TEST_ENVIRONMENT = {
    "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "UPSTREAM_ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SYNC_MIN_SECONDS": "0",
    "TASK_POLL_INTERVAL_MS": "200",
}
for name, value in TEST_ENVIRONMENT.items():
    os.environ.setdefault(name, value)

# The run's metric files (approvals.observe.metrics) in a folder of its own, which the processes tests start inherit.
os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="console-metrics-")
atexit.register(shutil.rmtree, os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)


@pytest.fixture(autouse=True, scope="session")
def tasks_run_inline():
    # Tests that need a real worker start one and switch this off for themselves;
    # elsewhere a task sent to Redis with no worker would never run.
    from console.celery import app

    app.conf.task_always_eager = True
    yield


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    from django.test import TransactionTestCase

    with django_db_blocker.unblock():
        flush = FlushKeepingMigratedRows()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", lambda test_case: flush.teardown(test_case))
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


class FlushKeepingMigratedRows:
    """Empties the tables after a transactional test, but those of rows migrate made and no test changes.

    Django's flush empties every table, then post_migrate makes the content types, the permissions
    and the roles (groups) again, for every app: most of the cost of a transactional test that does
    little. A test that changed those rows all the same gets Django's own flush.
    """

    KEPT = ("django_content_type", "auth_permission", "auth_group", "auth_group_permissions")

    def __init__(self):
        from django.db import connections
        from django.test import TransactionTestCase

        self.django_flush = TransactionTestCase._fixture_teardown
        self.migrated = {alias: self.kept_rows(alias) for alias in connections}

    @staticmethod
    def kept_rows(alias) -> list:
        from django.contrib.auth.models import Group, Permission
        from django.contrib.contenttypes.models import ContentType

        models = (ContentType, Permission, Group, Group.permissions.through)
        return [list(model.objects.using(alias).order_by("pk").values_list()) for model in models]

    @staticmethod
    def emptying(connection, tables) -> list[str]:
        from django.core.management.color import no_style

        if connection.vendor != "postgresql":
            return connection.ops.sql_flush(no_style(), tables)
        # TRUNCATE takes the strongest lock on every table and gives each new files, which costs far more than
        # deleting the few rows a test leaves. Foreign keys and the audit triggers are off, as for Django's flush.
        deletes = [f"DELETE FROM {connection.ops.quote_name(table)}" for table in tables]
        return ["SET LOCAL session_replication_role = replica", *deletes]

    def teardown(self, test_case):
        from django.db import connections

        from approvals.audit.chain import start_empty_log

        aliases = test_case._databases_names(include_mirrors=False)
        if any(self.kept_rows(alias) != self.migrated[alias] for alias in aliases):
            self.django_flush(test_case)
            self.migrated.update({alias: self.kept_rows(alias) for alias in aliases})
            return
        for alias in aliases:
            connection = connections[alias]
            tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
            emptied = [table for table in tables if table not in self.KEPT]
            connection.ops.execute_sql_flush(self.emptying(connection, emptied))
            # The one post_migrate step that fills an emptied table: an empty audit log has its head row.
            start_empty_log(using=alias)


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
def services_only_where_marked(request, monkeypatch):
    """Fails a test the services pass would leave out that reached the channel layer, the cache or celery.

    Reaching one is making its client: the cache's for this test (after every request Django closes the
    caches made before), the channel layer's (fresh_channel_layer drops the last test's), a connection to
    the broker. Only the test's own thread counts: a live console's threads serve whichever test is running.
    """
    if uses_services(request.node):
        yield
        return
    from asgiref.local import Local
    from celery import Celery
    from channels.layers import ChannelLayerManager
    from django.core.cache import CacheHandler, caches

    reached = []

    def noting(cls, name, service):
        original = getattr(cls, name)

        def reach(*args, **kwargs):
            if threading.current_thread() is threading.main_thread():
                reached.append(service)
            return original(*args, **kwargs)

        monkeypatch.setattr(cls, name, reach)

    monkeypatch.setattr(caches, "_connections", Local())
    noting(CacheHandler, "create_connection", "the cache")
    noting(ChannelLayerManager, "make_backend", "the channel layer")
    noting(Celery, "_connection", "celery's broker")
    yield
    if reached:
        pytest.fail(
            f"this test reached {' and '.join(sorted(set(reached)))} without the database: mark it"
            " @pytest.mark.services, so that the services pass of `make test` runs it on Redis too"
        )


@pytest.fixture(autouse=True)
def no_audit_witness(request):
    # The witness lives outside the database, which every test rolls back: a head one test
    # verified would be missing from the next test's chain. Only a test with a database has a chain.
    if not uses_services(request.node):
        yield
        return
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


@pytest.fixture(autouse=True, scope="session")
def test_settings():
    from django.test import override_settings

    allowed = {name: os.environ[name].split(",") for name in ("WEBHOOK_ALLOWED_HOSTS", "UPSTREAM_ALLOWED_HOSTS")}
    with override_settings(**allowed, SYNC_MIN_SECONDS=float(os.environ["SYNC_MIN_SECONDS"])):
        yield


@pytest.fixture
def tmp_path(tmp_path):
    """pytest's, which it makes 0700, open to every user: stdio servers read their scenarios there, and a root
    console runs them as mcp-stdio (what a sandbox binds keeps its modes)."""
    tmp_path.chmod(0o755)
    return tmp_path
