import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.setup_logging.connect
def log_as_the_web_processes_do(**kwargs):
    """Django's LOGGING (LOG_FORMAT=json included) rather than celery's own handlers on the root logger."""
    from logging.config import dictConfig

    from django.conf import settings

    dictConfig(settings.LOGGING)


@signals.worker_init.connect
@signals.worker_process_init.connect
def sample_the_worker(**kwargs):
    # The worker's own process, and each child of a prefork pool, where the tasks run.
    from approvals.observe import metrics

    metrics.watch_this_process()
