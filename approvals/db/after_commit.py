"""Running a celery task by its name once the transaction commits.

By name, so that the packages whose work the tasks run need not import approvals.tasks
(which imports them) nor the celery app of console/. The task is the one registered under
that name (approvals.apps imports approvals.tasks in every process), so it runs inline
where tasks run eagerly (embedded) and goes to the broker elsewhere. After commit, so that
a worker in another process finds the rows it is given.
"""

from celery import current_app
from django.db import transaction


def enqueue(task_name: str, *args, **kwargs):
    transaction.on_commit(lambda: current_app.tasks[task_name].delay(*args, **kwargs))
