"""stdio toward an upstream server: a child process speaking newline-delimited JSON-RPC."""

import asyncio
import contextlib
import logging
import os
import signal

from approvals.protocol import jsonrpc

from . import isolation
from .errors import UpstreamError
from .exchange import MAX_MESSAGE_BYTES, Exchange, Serve, parse
from .spec import ServerSpec

log = logging.getLogger(__name__)

STDERR_TAIL_BYTES = 16 * 1024
# An unisolated child inherits only these from the console's environment: the console's own
# secrets (database URL, secret key, tokens) are no business of an upstream server.
INHERITED_ENV = ("HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER")
STOP_GRACE_SECONDS = 2.0
# How long a dead child's last output, exit code and stderr are awaited for the error message.
DRAIN_SECONDS = 0.5
EXIT_POLL_SECONDS = 0.25


class StdioTransport:
    def __init__(self, spec: ServerSpec, serve: Serve):
        self.spec = spec
        self.alive = False
        self._serve = serve
        self._process: asyncio.subprocess.Process | None = None
        self._spawning: asyncio.Future | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._tasks: set[asyncio.Task] = set()
        self._write_lock = asyncio.Lock()
        self._stderr = bytearray()
        self._error: UpstreamError | None = None
        self._ended = asyncio.Event()  # the reader saw the end of the child's output
        self._failed = asyncio.Event()  # _error is set: the session is over
        self._serving = 0  # server requests we are answering: the server waits on us, not we on it
        self._last_served = 0.0

    @property
    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def start(self) -> None:
        if not self.spec.command:
            raise UpstreamError(f"{self.spec.name}: no command to start")
        inherited = {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}
        cwd = self.spec.cwd or os.getcwd()
        try:
            launch = isolation.prepare(
                list(self.spec.command), cwd, dict(self.spec.env), inherited, self.spec.isolation
            )
        except UpstreamError as exc:
            raise UpstreamError(f"{self.spec.name}: {exc.message}") from None
        self._spawning = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=launch.env,
                cwd=cwd,
                # Its own process group, so closing kills whatever the child started too.
                start_new_session=True,
                limit=MAX_MESSAGE_BYTES,
            )
        )
        try:
            # Shielded: create_subprocess_exec cancelled midway kills the child alone and waits for its pipes to
            # close, which whatever the child started keeps open (and Python 3.11 may wait for pipes it never
            # connected, CPython gh-103847). Cancelled, the spawn runs on, and close() stops its process group.
            self._process = await asyncio.shield(self._spawning)
        except OSError as exc:
            raise UpstreamError(f"{self.spec.name}: cannot start {self.spec.command[0]!r}: {exc}") from None
        self.alive = True
        self._stderr_task = self._spawn(self._read_stderr())
        self._spawn(self._read_stdout())
        # A grandchild may hold stdout open after the child died, so the exit is watched too.
        self._spawn(self._watch_exit())

    async def request(self, message: dict, headers: dict[str, str], exchange: Exchange) -> jsonrpc.Response:
        future = asyncio.get_running_loop().create_future()
        self._pending[exchange.request_id] = future
        try:
            await self._write(message)
            return await self._wait(future, exchange)
        finally:
            self._pending.pop(exchange.request_id, None)

    async def notify(self, message: dict, headers: dict[str, str]) -> None:
        await self._write(message)

    async def start_listening(self) -> None:
        """Nothing to open: on stdio everything the server sends arrives on one stream."""

    async def end_session(self) -> None:
        """A stdio session ends with its process."""

    async def close(self) -> None:
        self._fail(UpstreamError(f"{self.spec.name}: the session is closed", retryable=True))
        if self._process is None and self._spawning is not None:
            # A start cut short: its spawn is let finish, so that what it started is stopped here.
            with contextlib.suppress(OSError):
                self._process = await asyncio.shield(self._spawning)
        process = self._process
        if process is not None:
            if process.returncode is None:
                process.stdin.close()
                self._signal(signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(STOP_GRACE_SECONDS):
                        await process.wait()
            # Also reaches what the child started and left behind when it exited.
            self._signal(signal.SIGKILL)
            try:
                async with asyncio.timeout(STOP_GRACE_SECONDS):
                    await process.wait()
            except TimeoutError:
                log.warning("%s: a process outside the server's group still holds its pipes", self.spec.name)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _write(self, message: dict) -> None:
        if not self.alive:
            raise self._dead()
        async with self._write_lock:
            try:
                self._process.stdin.write(jsonrpc.encode(message) + b"\n")
                async with asyncio.timeout(self.spec.timeout):
                    await self._process.stdin.drain()
            except TimeoutError:
                raise UpstreamError(
                    f"{self.spec.name}: the server has not read its input for {self.spec.timeout:g}s", retryable=True
                ) from None
            except (BrokenPipeError, ConnectionResetError):
                # The child is gone; wait until the watchers have found out how, for the message.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(STOP_GRACE_SECONDS):
                        await self._failed.wait()
                raise self._dead() from None

    async def _wait(self, future: asyncio.Future, exchange: Exchange) -> jsonrpc.Response:
        loop = asyncio.get_running_loop()
        while True:
            if self._serving:
                remaining = self.spec.timeout
            else:
                remaining = max(exchange.last_activity, self._last_served) + self.spec.timeout - loop.time()
            if remaining <= 0:
                raise UpstreamError(
                    f"{self.spec.name}: no answer to {exchange.method} within {self.spec.timeout:g}s", retryable=True
                )
            try:
                async with asyncio.timeout(remaining):
                    return await asyncio.shield(future)
            except TimeoutError:
                continue

    async def _read_stdout(self) -> None:
        try:
            while True:
                try:
                    line = await self._process.stdout.readline()
                except ValueError:
                    self._fail(UpstreamError(f"{self.spec.name}: sent a line longer than {MAX_MESSAGE_BYTES} bytes"))
                    return
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    message = parse(line, self.spec.name)
                except UpstreamError as exc:
                    self._fail(exc)
                    return
                if isinstance(message, jsonrpc.Response):
                    future = self._pending.get(message.id)
                    if future is not None and not future.done():
                        future.set_result(message)
                    continue
                self._spawn(self._answer(message))
        finally:
            self._ended.set()
        await self._died()

    async def _watch_exit(self) -> None:
        # Polled: before Python 3.12, Process.wait() also waits for the pipes a grandchild may hold.
        while self._process.returncode is None:
            await asyncio.sleep(EXIT_POLL_SECONDS)
        await self._died()

    async def _died(self) -> None:
        """The child exited or closed its output: wait briefly for the rest of it, then say how it ended."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN_SECONDS
        ended = asyncio.ensure_future(self._ended.wait())
        await asyncio.wait([ended, self._stderr_task], timeout=DRAIN_SECONDS)
        ended.cancel()
        while self._process.returncode is None and loop.time() < deadline:
            await asyncio.sleep(0.02)
        code = self._process.returncode
        how = f"exited with code {code}" if code is not None else "closed its output"
        tail = self.stderr_tail.strip()[-2000:]
        self._fail(
            UpstreamError(
                f"{self.spec.name}: the server process {how}" + (f"; its stderr ends: {tail}" if tail else ""),
                retryable=True,
            )
        )

    def _fail(self, error: UpstreamError) -> None:
        self.alive = False
        self._error = self._error or error
        self._failed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._dead())

    def _dead(self) -> UpstreamError:
        error = self._error or UpstreamError(f"{self.spec.name}: the session is closed", retryable=True)
        return UpstreamError(error.message, retryable=error.retryable, code=error.code)

    async def _answer(self, message: jsonrpc.Request | jsonrpc.Notification) -> None:
        is_request = isinstance(message, jsonrpc.Request)
        self._serving += is_request
        try:
            reply = await self._serve(message, None)
            if reply is not None:
                await self._write(reply)
        except UpstreamError as exc:
            log.info("%s: could not answer %s: %s", self.spec.name, message.method, exc.message)
        finally:
            self._serving -= is_request
            if is_request:
                self._last_served = asyncio.get_running_loop().time()

    async def _read_stderr(self) -> None:
        while chunk := await self._process.stderr.read(4096):
            self._stderr += chunk
            del self._stderr[:-STDERR_TAIL_BYTES]
