"""A stand-in console for tests/upstream/test_isolation.py: a process of an ordinary user that starts the
prying server through the upstream session pool with STDIO_ISOLATION=none, so that the server runs as the
same user, and prints what the server could read of it.

    python same_user_console.py PYTHON PRYING_SERVER [--dumpable]

Unless --dumpable, it first makes itself non-dumpable, as the console does at start-up.
"""

import asyncio
import json
import os
import sys

from approvals.upstream import ServerSpec, SessionPool
from approvals.upstream.isolation import make_undumpable


async def main(python: str, server: str) -> dict:
    os.environ["SECRET_KEY"] = "what a stdio server must never read"
    packages = {"PYTHONPATH": os.environ["PYTHONPATH"]}
    spec = ServerSpec(name="prying", transport="stdio", command=(python, server), env=packages, timeout=20)
    pool = SessionPool()
    try:
        session = await pool.get(spec)
        result = await session.call_tool("pry", {"pid": os.getpid(), "paths": []})
    finally:
        await pool.close_all()
    outcomes = result["structuredContent"]
    outcomes.pop("uid")
    outcomes.pop("capabilities")
    return {"pid": os.getpid(), "outcomes": outcomes}


if __name__ == "__main__":
    python, server, *options = sys.argv[1:]
    if "--dumpable" not in options:
        make_undumpable()
    print(json.dumps(asyncio.run(main(python, server))))
