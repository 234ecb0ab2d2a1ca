"""Running a celery task by its name once the transaction commits.

By name, so that the packages whose work the tasks run need not import approvals.tasks
(which imports them) nor the celery app of console/. The task is the one registered under
that name (approvals.apps imports approvals.tasks in every process), so it runs inline
where tasks run eagerly (embedded) and goes to the broker elsewhere. After commit, so that
a worker in another process finds the rows it is given.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.db import close_old_connections, transaction

log = logging.getLogger(__name__)


def enqueue(task_name: str, *args, **kwargs):
    transaction.on_commit(lambda: current_app.tasks[task_name].delay(*args, **kwargs))


def soon(task_name: str, *args):
    """The task once the transaction commits, off the path of the request that made it: on a worker, or where
    tasks run inline, on a thread of this process. Robust: a broker that fails must not fail that request."""
    transaction.on_commit(lambda: start(task_name, args), robust=True)


def start(task_name: str, args: tuple):
    if current_app.conf.task_always_eager:
        pool().submit(run_here, task_name, args)
    else:
        # No retries on a broker that does not answer: this runs on the request that made the change.
        current_app.send_task(task_name, args=list(args), retry=False)


def run_here(task_name: str, args: tuple):
    # A thread of the pool may hold a connection the database has since closed.
    close_old_connections()
    try:
        current_app.tasks[task_name](*args)
    except Exception:
        log.exception("task %s%r failed", task_name, args)
    finally:
        close_old_connections()


_POOL: ThreadPoolExecutor | None = None
_POOL_MADE = threading.Lock()


def pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_MADE:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(2, thread_name_prefix="after-commit")
        return _POOL
