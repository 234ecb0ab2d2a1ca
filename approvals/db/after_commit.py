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


def off_path(task_name: str, *args):
    """Run the task once the transaction commits, never on the thread that committed: to the broker, or, where
    tasks run inline (embedded), on a few threads of this process. For work a request must not wait for (outbound
    I/O that tells of the change); a broker that fails loses it, and the change it tells of stands."""
    transaction.on_commit(lambda: start(task_name, args), robust=True)


def start(task_name: str, args):
    if current_app.conf.task_always_eager:
        threads().submit(run_inline, task_name, args)
    else:
        # No retries on a broker that does not answer: this runs on the request that made the change.
        current_app.send_task(task_name, args=list(args), retry=False)


def run_inline(task_name: str, args):
    # A thread of the pool may hold a connection the database has since closed.
    close_old_connections()
    try:
        current_app.tasks[task_name](*args)
    except Exception:
        log.exception("%s could not run", task_name)
    finally:
        close_old_connections()


_THREADS: ThreadPoolExecutor | None = None
_THREADS_MADE = threading.Lock()


def threads() -> ThreadPoolExecutor:
    global _THREADS
    with _THREADS_MADE:
        if _THREADS is None:
            _THREADS = ThreadPoolExecutor(4, thread_name_prefix="off-path")
        return _THREADS
