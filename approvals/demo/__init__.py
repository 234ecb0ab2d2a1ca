"""The console's demo upstream server: a small customer-records service over MCP stdio.

It must stay importable without Django settings, because the console starts it as a
plain child process, by the command below (a stdio server's `command`).
"""

import shlex
import sys

# This Python, so that the child finds the same packages as the console.
COMMAND = [sys.executable, "-m", "approvals.demo.server"]
COMMAND_LINE = shlex.join(COMMAND)
