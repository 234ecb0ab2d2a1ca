"""The upstream client stays pure asyncio, aiohttp and httpx, usable outside Django."""

import subprocess
import sys


def test_it_imports_no_django():
    code = "import sys, approvals.upstream; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
