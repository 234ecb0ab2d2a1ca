"""Run as a separate process by test_concurrency: appends audit events to the database DATABASE_URL names.

python -m tests.audit.appender WORKER COUNT START_AT
"""

import os
import sys
import time


def main(worker: int, count: int, start_at: float):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    import django

    django.setup()
    from approvals.audit import chain

    actor = chain.Actor("system", None, f"writer-{worker}")
    # Every writer starts at the same moment, so that they contend for the head.
    time.sleep(max(0.0, start_at - time.time()))
    for n in range(count):
        chain.record("server.changed", actor, data={"worker": worker, "n": n})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
