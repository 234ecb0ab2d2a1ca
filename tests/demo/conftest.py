"""Drive the demo server as a real child process: through the official SDK client, or line by line."""

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from approvals.demo import COMMAND

ROOT = Path(__file__).resolve().parents[2]
SERVER = StdioServerParameters(command=COMMAND[0], args=COMMAND[1:], cwd=str(ROOT))
MODERN = "2026-07-28"
ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]

# The SDK client's two ways in: the initialize handshake, or server/discover (the default).
both_eras = pytest.mark.parametrize(
    "mode, version",
    [("legacy", "2025-11-25"), ("auto", MODERN)],
    ids=["legacy", "modern"],
)


def connect(mode: str, **options) -> Client:
    return Client(SERVER, mode=mode, **options)


async def all_tools(client: Client) -> list:
    page = await client.list_tools()
    listed = list(page.tools)
    while page.next_cursor:
        page = await client.list_tools(cursor=page.next_cursor)
        listed += page.tools
    return listed


def envelope(capabilities: dict | None = None, version: str = MODERN, **params) -> dict:
    """Params of a 2026-07-28 request: its own arguments plus the per-request _meta."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    }
    return {**params, "_meta": {**meta, **params.get("_meta", {})}}


def tools_call(message_id, name: str, arguments: dict, **params) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


class RawServer:
    """The server on plain pipes, for what a well-behaved SDK client never sends."""

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.others: list[dict] = []

    async def send(self, message: dict | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def notify(self, method: str, params: dict | None = None) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    async def receive(self, timeout: float = 5.0) -> dict:
        return json.loads(await asyncio.wait_for(self.process.stdout.readline(), timeout))

    async def answer(self, message_id, timeout: float = 5.0) -> dict:
        """The response to `message_id`; whatever arrives before it is kept in `others`."""
        while True:
            message = await self.receive(timeout)
            if message.get("id") == message_id and "method" not in message:
                return message
            self.others.append(message)

    async def request(self, message_id, method: str, params: dict | None = None) -> dict:
        await self.send({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params or {}})
        return await self.answer(message_id)

    async def initialize(self, version: str = "2025-11-25", capabilities: dict | None = None) -> dict:
        answer = await self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        return answer["result"]

    async def quiet_for(self, seconds: float) -> list[dict]:
        """Everything the server says in the next `seconds`."""
        said = []
        try:
            while True:
                said.append(await self.receive(seconds))
        except TimeoutError:
            return said


@pytest.fixture
async def raw():
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    yield RawServer(process)
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        process.kill()
        await process.wait()
