"""What the services pass of `make test` runs: the tests of code that behaves differently on PostgreSQL and Redis.

The embedded pass runs every test. The services pass runs again only those marked `postgres`, `redis` or
`services`: a test module named below gets `services` for all its tests (tests/conftest.py adds it), a test may
carry the marker itself. The code that behaves differently there is what takes row locks (select_for_update),
writes SQL by hand, counts on triggers, or reaches the channel layer, the cache or celery;
tests/test_services_pass.py finds those modules and fails unless some test of the services pass imports each,
or it is named in EXERCISED_BY with a test module of the services pass that runs it.
"""

# Test modules the services pass runs whole, by what they exercise there.
SERVICE_TESTS = {
    # the audit chain: the head's row lock, hand-written inserts, the triggers, pg_trgm search, roles, the witness
    "tests/audit/test_chain.py": "appends under the head's row lock, batches as one statement",
    "tests/audit/test_append.py": "a batch's events in one hand-written insert, its rows as the ORM writes them",
    "tests/audit/test_concurrency.py": "appends racing from several connections",
    "tests/audit/test_database_roles.py": "the triggers and the roles that may not change the log",
    "tests/audit/test_query.py": "the trigram search and the counting budget",
    "tests/audit/test_retention.py": "pruning past the triggers",
    "tests/audit/test_witness_store.py": "the witness in the cache",
    "tests/audit/test_call_paths.py": "the events of every call path, verified",
    "tests/audit/test_forwarding.py": "the forwarder's cursor row and lock",
    "tests/audit/test_pages.py": "verifying the log through celery",
    # calls: conditional updates, row locks, waiting through the channel layer
    "tests/calls/test_decisions.py": "two decisions racing for one call",
    "tests/calls/test_quorum.py": "approvals racing for one call",
    "tests/calls/test_statements.py": "update-if-status by hand",
    "tests/calls/test_driver.py": "a batch's statements on psycopg's cursor, its errors as Django's",
    "tests/calls/test_holding.py": "the holding loop's batched writes",
    "tests/calls/test_cut_short.py": "a held call cut short through the channel layer",
    "tests/calls/test_listening.py": "waiting on a row through the channel layer",
    "tests/calls/test_waiting.py": "waiting for a decision",
    "tests/calls/test_token_expiry.py": "the periodic task that ends expired tokens",
    "tests/queue/test_taking.py": "taking a call under its row lock",
    "tests/queue/test_live_socket.py": "the queue's websocket through the channel layer",
    "tests/queue/test_queue_groups.py": "the consumer's groups in the channel layer",
    # the catalog: review and sync under locks, upstream tokens claimed by one refresher
    "tests/catalog/test_surface_review.py": "a review under the entry's row lock",
    "tests/catalog/test_sync.py": "a server's sync under its row lock",
    "tests/catalog/test_upstream_notifications.py": "a list change's sync, coalesced through the shared cache",
    "tests/upstream_oauth/test_upstream_token_renewal.py": "one refresh claimed among racing writers",
    "tests/upstream_oauth/test_upstream_oauth.py": "connecting and refreshing an upstream grant",
    # the gateway: rate limits in the cache, kept lookups and sessions, news through the channel layer
    "tests/gateway/test_kept_lookups.py": "lookups kept in the cache",
    "tests/gateway/test_session_pruning.py": "pruning sessions by hand-written SQL",
    "tests/gateway/test_anonymous.py": "rate limits in the cache",
    "tests/gateway/test_token_calls.py": "a token's waiting calls counted under its row lock",
    "tests/gateway/test_token_refusals.py": "a token changed under its row lock",
    "tests/gateway/test_cancellation.py": "a cancellation through the channel layer",
    "tests/api/test_events.py": "the API's window of events",
    "tests/api/test_journal.py": "the journal in the cache",
    # the policy's rules moved under their row locks; sign-in throttled in the cache; metrics
    "tests/pages/test_policy_pages.py": "rules changed and moved under their row locks",
    "tests/pages/test_signin_throttle.py": "failures counted in the cache",
    "tests/oauth/test_token_endpoint.py": "client secrets counted against the sign-in throttle in the cache",
    "tests/oauth/test_registrations.py": "registrations counted against their rate in the cache",
    "tests/oauth/test_person_access.py": "a person's access ended under row locks, their calls cancelled",
    "tests/oauth/test_grants_follow_owner.py": "credentials refused by the kept lookups' triggers on people",
    "tests/signin/test_sessions.py": "browser sessions under a hash of their key",
    "tests/gateway/test_tasks.py": "a task taken by one process through the conditional move",
    "tests/observe/test_metrics.py": "metrics of the processes",
    # celery: webhooks sent by a worker, and the topology of several processes
    "tests/webhooks/test_deliveries.py": "deliveries queued to celery",
    "tests/webhooks/test_events.py": "events sent after commit",
    "tests/push/test_notifications.py": "notifications sent after commit by a celery worker",
    "tests/topology/test_health.py": "the health of each service",
}

# Modules no test of the services pass imports, and the services test that exercises them.
EXERCISED_BY = {
    "approvals/calls/waiting.py": "tests/gateway/test_token_calls.py",
    "console/cache.py": "tests/topology/test_cache.py",
    "approvals/apps.py": "tests/audit/test_database_roles.py",
    "approvals/db/after_commit.py": "tests/webhooks/test_deliveries.py",
    "approvals/views/audit.py": "tests/audit/test_pages.py",
    "console/__init__.py": "tests/topology/test_health.py",
    "console/settings.py": "tests/topology/test_health.py",
}
