"""A session's requests beyond tools: lists, resources and their subscriptions, prompts and completion."""

import asyncio

from approvals.protocol import jsonrpc
from approvals.protocol.results import check_completion_result, check_prompt_result, check_read_result
from approvals.protocol.revisions import MODERN

from .errors import UpstreamError


class SurfaceRequests:
    """Mixed into UpstreamSession, whose `_request`, `_complete`, `_era`, `_listening` and `spec` these use."""

    async def list_tools(self) -> list[dict]:
        """Every tool the server lists, following nextCursor to the end, within the spec's caps."""
        return await self._list_all("tools/list", "tools")

    async def list_resources(self) -> list[dict]:
        """Every resource the server lists, following nextCursor, within the same caps as tools."""
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict]:
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict]:
        return await self._list_all("prompts/list", "prompts")

    async def read_resource(self, uri: str) -> dict:
        """The ReadResourceResult for `uri`, its contents checked (text or base64 blob) and within result_max_bytes."""
        result = self._complete(await self._request("resources/read", {"uri": uri}), f"resources/read {uri}")
        await self._check(result, check_read_result, f"resources/read {uri}")
        return result

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict:
        """The GetPromptResult of prompt `name` given `arguments`, its messages checked, within result_max_bytes."""
        params = {"name": name, "arguments": arguments}
        result = self._complete(await self._request("prompts/get", params), f"prompts/get {name}")
        await self._check(result, check_prompt_result, f"prompts/get {name}")
        return result

    async def complete(self, ref: dict, argument: dict, context: dict | None = None) -> dict:
        """The CompleteResult for one argument of a prompt or resource template (`ref` as the spec names it)."""
        params: dict = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = context
        result = self._complete(await self._request("completion/complete", params), "completion/complete")
        await self._check(result, check_completion_result, "completion/complete")
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for notifications/resources/updated of `uri`: by resources/subscribe, or in 2026-07-28 by listening."""
        if self._era == MODERN:
            if self._listening is None:
                raise UpstreamError(f"{self.spec.name}: a session without a notification handler listens to nothing")
            await self._listening.subscribe(uri)
        else:
            await self._request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        if self._era == MODERN:
            if self._listening is not None:
                await self._listening.unsubscribe(uri)
        else:
            await self._request("resources/unsubscribe", {"uri": uri})

    async def _check(self, result: dict, check, what: str) -> None:
        # In a thread: checking costs time in proportion to the result, and the loop serves every other request.
        problems = (await asyncio.to_thread(check, result, max_bytes=self.spec.result_max_bytes)).errors
        if problems:
            raise UpstreamError(f"{self.spec.name}: {what} answered a malformed result: {'; '.join(problems)}")

    async def _list_all(self, method: str, key: str) -> list[dict]:
        items: list[dict] = []
        cursor, seen, total = None, set(), 0
        for _ in range(self.spec.list_max_pages):
            result = self._complete(await self._request(method, {} if cursor is None else {"cursor": cursor}), method)
            total += len(jsonrpc.encode(result))
            if total > self.spec.list_max_bytes:
                raise UpstreamError(
                    f"{self.spec.name}: {method} is larger than list_max_bytes ({self.spec.list_max_bytes} bytes)"
                )
            page = result.get(key)
            if not isinstance(page, list) or not all(isinstance(item, dict) for item in page):
                raise UpstreamError(f"{self.spec.name}: {method} answered without a list of {key} objects")
            items.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
            if not isinstance(cursor, str) or cursor in seen:
                raise UpstreamError(f"{self.spec.name}: {method} gave the cursor {cursor!r} twice or in a wrong type")
            seen.add(cursor)
        raise UpstreamError(
            f"{self.spec.name}: {method} has more than list_max_pages ({self.spec.list_max_pages}) pages"
        )
