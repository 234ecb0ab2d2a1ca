"""What the benches share to start and drive a console: its environment, its database, its web
processes and upstream, its preparation, an MCP client and an operator's session (their command lines: options.py)."""

import itertools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fixtures.servers import SERVERS, WEB_SERVER, free_port, running, serving_pid  # noqa: E402

LEGACY_REVISION = "2025-11-25"
MODERN_REVISION = "2026-07-28"
SETUPS = ["embedded", "services"]
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
TIMEOUT_SECONDS = 30


class BenchError(RuntimeError):
    pass


def run_as_script(main, name: str):
    os.chdir(REPO)
    # A plain kill still unwinds main's ExitStack, so nothing started there outlives the run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        main()
    except BenchError as exc:
        sys.exit(f"{name}: {exc}")


@dataclass
class Sample:
    path: str
    concurrency: int
    latencies: list = field(default_factory=list)
    errors: int = 0
    wall: float = 0.0

    @property
    def calls(self):
        return len(self.latencies)

    @property
    def throughput(self):
        return self.calls / self.wall if self.wall else 0.0

    def percentile(self, p):
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000 if ordered else float("nan")


class McpClient:
    """Just enough of an MCP client for tools/call: a session in the legacy era, _meta and headers in the modern one."""

    def __init__(self, http: httpx.AsyncClient, url: str, revision: str, token: str | None = None):
        self.http, self.url, self.revision = http, url, revision
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.ids = itertools.count(1)

    @property
    def modern(self):
        return self.revision == MODERN_REVISION

    async def start(self):
        if self.modern:
            return
        info = {"name": "gateway-overhead-bench", "version": "1"}
        response = await self.post(
            {
                "jsonrpc": "2.0",
                "id": next(self.ids),
                "method": "initialize",
                "params": {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": info},
            }
        )
        answer = self.answer(response)
        if "result" not in answer:
            raise BenchError(f"initialize at {self.url} failed: {answer}")
        if "mcp-session-id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = answer["result"]["protocolVersion"]
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict) -> dict:
        params = {"name": tool, "arguments": arguments}
        headers = {}
        if self.modern:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": self.revision,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            headers = {"MCP-Protocol-Version": self.revision, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call", "params": params}
        return self.answer(await self.post(message, headers))

    async def post(self, message: dict, headers: dict | None = None) -> httpx.Response:
        response = await self.http.post(self.url, json=message, headers={**self.headers, **(headers or {})})
        if response.status_code >= 400:
            raise BenchError(
                f"{message.get('method')} at {self.url}: HTTP {response.status_code} {response.text[:300]}"
            )
        return response

    @staticmethod
    def answer(response: httpx.Response) -> dict:
        """The JSON-RPC response in a JSON body or among an SSE stream's events."""
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for data in events(response.text):
                message = json.loads(data)
                if "result" in message or "error" in message:
                    return message
            raise BenchError(f"an event stream with no response in it: {response.text[:300]}")
        return response.json() if response.content else {}


def events(stream: str):
    """The data of each SSE event that has any (a priming event carries none)."""
    lines = []
    for line in stream.splitlines() + [""]:
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            if "".join(lines).strip():
                yield "\n".join(lines)
            lines = []


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise BenchError(f"manage.py {' '.join(args[:1])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def console_env(**settings) -> dict:
    """This process's environment for the console, quiet and with no per-token rate limit, `settings` over it."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "LOG_LEVEL": "WARNING",
        "MCP_RATE_LIMIT_PER_MINUTE": str(10**9),
        **settings,
    }


def scratch_dir(stack: ExitStack, prefix: str) -> str:
    """A temporary folder that `stack` removes."""
    path = tempfile.mkdtemp(prefix=prefix)
    stack.callback(shutil.rmtree, path, ignore_errors=True)
    return path


def inherited_env(stack: ExitStack, prefix: str, **settings) -> tuple[dict, str]:
    """The console's environment on DATABASE_URL's own database (and REDIS_URL) when set, else on SQLite in a
    scratch folder; and that folder, made either way, which `stack` removes."""
    var_dir = scratch_dir(stack, prefix)
    env = console_env(**settings)
    if not env.get("DATABASE_URL"):
        env["CONSOLE_VAR_DIR"] = var_dir
    return env, var_dir


@contextmanager
def bench_database(server_url: str, name: str):
    """A database of the bench's own on the server DATABASE_URL names, dropped afterwards.

    Its name carries the database DATABASE_URL names, so that benches run side by side against one server
    keep apart.
    """
    named = urlsplit(server_url).path.strip("/")
    name = f"{name}_{named}" if named else name
    admin = urlsplit(server_url)._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")
    try:
        yield urlsplit(server_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def setup_env(stack: ExitStack, name: str, database: str) -> dict:
    """The console's environment for a setup: "embedded" in a scratch folder, else PostgreSQL (in a database of
    its own, named after `database`) and Redis; `stack` removes what it made."""
    # DATABASE_URL and REDIS_URL set, though empty: servers started with tests.fixtures.servers.running get the
    # bench's own environment under this one, and an embedded console must not take the services from it.
    env = console_env(DATABASE_URL="", REDIS_URL="", SECRET_KEY=secrets.token_urlsafe(40))
    if name == "embedded":
        env["CONSOLE_VAR_DIR"] = scratch_dir(stack, "bench-")
        return env
    server_url = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    env["DATABASE_URL"] = stack.enter_context(bench_database(server_url, database))
    env["REDIS_URL"] = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    return env


# The ASGI servers a bench may serve the console with: granian as `make run` and the recipe run it, and with asyncio's
# own loop in place of uvloop's; uvicorn's parser is not among the console's dependencies (bench/servers.py).
WEB_SERVERS = {
    "granian": ["-m", *WEB_SERVER, "--host", "127.0.0.1", "--port", "{port}"],
    "granian-asyncio": ["-m", *(arg if arg != "uvloop" else "asyncio" for arg in WEB_SERVER)]
    + ["--host", "127.0.0.1", "--port", "{port}"],
    "daphne": ["-m", "daphne", "-b", "127.0.0.1", "-p", "{port}"],
    "uvicorn": ["-m", "uvicorn", "--host", "127.0.0.1", "--port", "{port}", "--loop", "uvloop", "--http", "httptools"]
    + ["--lifespan", "off", "--log-level", "warning"],
}


def console_process(stack: ExitStack, env: dict, output=None) -> tuple[str, int]:
    """The console as `make run` and the recipe serve it until `stack` ends, printing to `output` if given: its
    address and the pid of the process that serves."""
    return web_process(stack, env, "granian", output)


def web_process(stack: ExitStack, env: dict, server: str, output=None) -> tuple[str, int]:
    """The console served by `server` (one of WEB_SERVERS) until `stack` ends: its address and the pid of the
    process that serves (granian's worker, not the process that started it)."""
    port = free_port()
    argv = [sys.executable, *(arg.format(port=port) for arg in WEB_SERVERS[server]), "console.asgi:application"]
    process = stack.enter_context(running(argv, port=port, env=env, output=output))
    return f"http://127.0.0.1:{port}", serving_pid(process) if server.startswith("granian") else process.pid


def upstream(stack: ExitStack) -> tuple[str, int]:
    """tests/servers/sdk_server.py (the official SDK's MCPServer over Streamable HTTP) until `stack` ends: its URL
    and pid."""
    port = free_port()
    process = stack.enter_context(running([sys.executable, str(SERVERS / "sdk_server.py"), str(port)], port=port))
    return f"http://127.0.0.1:{port}/mcp", process.pid


def each_setup(args):
    """Each setup's name and the upstream's URL, the upstream running meanwhile; the setup is announced on stderr."""
    with ExitStack() as stack:
        url, _ = upstream(stack)
        for name in args.setup:
            print(f"measuring {name}…", file=sys.stderr)
            yield name, url


def prepare_console(env: dict, server: list[str], rules: list[list[str]], token: list[str]) -> str:
    """Migrate, add a server taking its tools as they are, its rules and a client token: the token's secret.

    `server`, each of `rules` and `token` are the arguments of add_server, add_rule and create_token.
    """
    manage(env, "migrate", "--noinput")
    manage(env, "add_server", *server, "--accept-tools")
    for rule in rules:
        manage(env, "add_rule", *rule)
    return manage(env, "create_token", *token).splitlines()[-1]
