"""The periodic work of CELERY_BEAT_SCHEDULE, run inside a web process when no celery beat runs it.

Embedded (`make run`) there is no beat: each web process runs the schedule itself, in one
asyncio task of its event loop, each job in a worker thread so that the loop goes on serving.
The jobs are the celery tasks of the schedule, called directly, so beat and the process run
the same functions at the same intervals: expiry of calls and input requests, abandoned calls,
audit verification and pruning, MCP session pruning, server syncs.
"""

import asyncio
import logging
import time
import weakref

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils.module_loading import import_string

log = logging.getLogger(__name__)

# Per event loop, its schedule's task: started once, and referenced so that it is not collected.
_RUNNING: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task]" = weakref.WeakKeyDictionary()


def start():
    """Run the schedule in this event loop from now on, once per loop, where PERIODIC_WORK_IN_PROCESS says so."""
    loop = asyncio.get_running_loop()
    if settings.PERIODIC_WORK_IN_PROCESS and loop not in _RUNNING:
        _RUNNING[loop] = loop.create_task(run_schedule(settings.CELERY_BEAT_SCHEDULE))


async def run_schedule(schedule: dict):
    """Run each entry's task every `schedule` seconds, the first time one interval from now, one at a time."""
    due = {name: time.monotonic() + entry["schedule"] for name, entry in schedule.items()}
    while due:
        name = min(due, key=due.get)
        await asyncio.sleep(max(0.0, due[name] - time.monotonic()))
        try:
            await sync_to_async(run_task, thread_sensitive=False)(schedule[name]["task"])
        except Exception:
            log.exception("the periodic work %s failed", name)
        due[name] = time.monotonic() + schedule[name]["schedule"]


def run_task(dotted_name: str):
    # A thread of the pool may hold a connection the database has since closed.
    close_old_connections()
    try:
        return import_string(dotted_name)()
    finally:
        close_old_connections()
