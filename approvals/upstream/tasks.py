"""Calling a tool that its server runs only as a task (2025-11-25 `execution.taskSupport: "required"`).

The console sends such a call as a task, follows it with tasks/get until it ends (its status
and message going to the caller as `notifications/tasks/status`), and collects its result
with tasks/result, on whose stream the server delivers what it asks meanwhile (an elicitation
while the task is `input_required`). A caller that stops waiting has the task cancelled.
Tools that forbid or merely allow tasks are called plainly: the console's own clients may
follow any call as a task of the console's (approvals.calls.tasks) whatever the server offers.
"""

import asyncio
import logging

from .errors import UpstreamError
from .exchange import OnNotification, OnRequest

log = logging.getLogger(__name__)

TERMINAL = {"completed", "failed", "cancelled"}
RELATED_TASK = "io.modelcontextprotocol/related-task"
# Bounds on the server's suggested poll interval, in seconds: never a busy loop, never a long sleep.
POLL_BOUNDS = (0.1, 5.0)


def requires_task(tool: dict | None) -> bool:
    execution = tool.get("execution") if isinstance(tool, dict) else None
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


class TaskCalls:
    """A session's calls run upstream as tasks; mixed into UpstreamSession, whose _request they use."""

    async def _call_as_task(
        self,
        name: str,
        params: dict,
        headers: dict,
        *,
        ttl_ms: int,
        on_request: OnRequest | None,
        on_notification: OnNotification | None,
    ) -> dict:
        created = await self._request("tools/call", {**params, "task": {"ttl": ttl_ms}}, headers=headers)
        task = created.get("task") if isinstance(created, dict) else None
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
            raise UpstreamError(f"{self.spec.name}: tools/call {name} as a task did not answer a task")
        try:
            await self._follow_task(task, on_notification)
            result = await self._request(
                "tasks/result",
                {"taskId": task["taskId"]},
                on_request=on_request,
                on_notification=on_notification,
            )
        except BaseException:
            self._cancel_task(task["taskId"], on_notification)
            raise
        return without_related_task(result)

    async def _follow_task(self, task: dict, on_notification: OnNotification | None) -> None:
        """Poll the task until it ends or needs input (which tasks/result then carries to the caller)."""
        while True:
            if on_notification is not None:
                await on_notification("notifications/tasks/status", task)
            if task.get("status") in TERMINAL or task.get("status") == "input_required":
                return
            interval = task.get("pollInterval")
            interval = interval / 1000 if isinstance(interval, (int, float)) and not isinstance(interval, bool) else 1
            await asyncio.sleep(min(max(interval, POLL_BOUNDS[0]), POLL_BOUNDS[1]))
            task = await self._request("tasks/get", {"taskId": task["taskId"]})
            if not isinstance(task, dict):
                raise UpstreamError(f"{self.spec.name}: tasks/get answered no task")

    def _cancel_task(self, task_id: str, on_notification: OnNotification | None) -> None:
        """The caller stopped waiting: cancel the task upstream, without making the caller wait for the server.

        The caller hears of the task as the server's answer leaves it, as of every status before."""

        async def cancel():
            try:
                task = await self._request("tasks/cancel", {"taskId": task_id})
                if on_notification is not None and isinstance(task, dict):
                    await on_notification("notifications/tasks/status", task)
            except UpstreamError as exc:
                log.info("%s: could not cancel task %s: %s", self.spec.name, task_id, exc.message)
            except Exception:
                log.exception("%s: the cancelled task %s could not be told to its caller", self.spec.name, task_id)

        if not self._transport.alive:
            return
        task = asyncio.create_task(cancel())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def without_related_task(result: dict) -> dict:
    meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else None
    if meta is None or RELATED_TASK not in meta:
        return result
    rest = {key: value for key, value in meta.items() if key != RELATED_TASK}
    return {**{key: value for key, value in result.items() if key != "_meta"}, **({"_meta": rest} if rest else {})}
