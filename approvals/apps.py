from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "MCP approvals"

    def ready(self):
        from approvals.upstream.isolation import make_undumpable

        # Every process kind sets Django up (granian's worker, celery, manage.py), and each holds the console's keys in
        # its environment and memory: none may be read through /proc by a stdio server of the same user.
        make_undumpable()
        from approvals import tasks  # noqa: F401 (registers the celery tasks that db.after_commit enqueues by name)
        from approvals.actions import announce, person_access
        from approvals.audit.chain import start_empty_log
        from approvals.db import lookups  # noqa: F401 (registers id__any_of)
        from approvals.live import access_changes
        from approvals.roles import ensure_roles
        from approvals.signin import signals, sso

        # After auth has created this app's permissions, which it also does on post_migrate.
        post_migrate.connect(ensure_roles, sender=self)
        post_migrate.connect(start_empty_log, sender=self)
        sso.check_settings()
        signals.connect()
        access_changes.connect()
        announce.connect()
        person_access.connect()
