"""The console's demo upstream server: a small customer-records service over MCP stdio.

Run it with `python -m approvals.demo.server`. It must stay importable without
Django settings, because the console starts it as a plain child process.
"""
