"""Run as a separate process by test_concurrency: appends audit events to the database DATABASE_URL names.

python -m tests.audit.appender WORKER COUNT

It prints "ready" once it can append, and starts when a line comes on its stdin.
"""

import os
import sys


def main(worker: int, count: int):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    import django

    django.setup()
    from django.db import connection

    from approvals.audit import chain

    actor = chain.Actor("system", None, f"writer-{worker}")
    connection.ensure_connection()
    print("ready", flush=True)
    # Every writer starts at the same moment, so that they contend for the head.
    sys.stdin.readline()
    for n in range(count):
        chain.record("server.changed", actor, data={"worker": worker, "n": n})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
