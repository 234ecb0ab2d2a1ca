"""Newline-delimited messages on the process's own stdin and stdout."""

import asyncio
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator

MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def read_lines(fd: int) -> Iterator[bytes]:
    """The lines arriving on `fd`; one longer than the limit comes out cut short (to be refused), its rest dropped.

    Plain os.read rather than sys.stdin: a daemon thread parked inside a buffered reader
    holds its lock, and the interpreter aborts if it has to exit meanwhile.
    """
    pending, skipping = bytearray(), False
    while chunk := os.read(fd, 1 << 16):
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line, pending = bytes(pending[: end + 1]), pending[end + 1 :]
            if not skipping:
                yield line
            skipping = False
        if len(pending) > MAX_MESSAGE_BYTES:
            if not skipping:
                yield bytes(pending[: MAX_MESSAGE_BYTES + 1])
            pending, skipping = bytearray(), True
    if pending and not skipping:
        yield bytes(pending)


async def stdin_lines() -> AsyncIterator[bytes]:
    """Lines of stdin, read on a daemon thread so that no pipe, file or tty can stall the event loop."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        for line in read_lines(sys.stdin.fileno()):
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, b"")

    threading.Thread(target=pump, name="stdin", daemon=True).start()
    while line := await queue.get():
        yield line


def write_stdout(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
