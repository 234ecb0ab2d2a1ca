"""The console starts the demo server as a plain child process, without Django."""

import subprocess
import sys

from approvals.demo import COMMAND
from tests.demo.conftest import ROOT


def test_it_imports_without_django():
    probe = "import sys, approvals.demo.server; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"

    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)

    assert loaded.stdout.strip() == "[]"


def test_it_keeps_stdout_for_protocol_messages_and_exits_cleanly_when_stdin_closes():
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'

    finished = subprocess.run(COMMAND, cwd=ROOT, input=ping, capture_output=True, timeout=10)

    assert finished.returncode == 0
    assert finished.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
