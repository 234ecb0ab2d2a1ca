"""How long a new waiting call takes to reach an operator's device: from receive_call holding it to a push service
on loopback having taken, checked (VAPID) and decrypted (RFC 8291) the notification.

    .venv/bin/python bench/web_push_latency.py [--calls 50] [--devices 3]

Embedded (SQLite in a temporary directory, tasks inline, so the push goes out on the process's own threads), one
operator with `--devices` devices at tests/push/service.py's push service. Calls are held one after another, each
once the last one's pushes all arrived; it prints the p50, p95 and worst of hold → every device's push taken.
Target: under a second. Everything listens on loopback and is stopped at the end.
"""

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--devices", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="web-push-bench-") as var:
        for name in ("DATABASE_URL", "REDIS_URL"):
            os.environ.pop(name, None)
        os.environ.update(CONSOLE_VAR_DIR=var, DJANGO_SETTINGS_MODULE="console.settings")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        logging.disable(logging.INFO)
        print(f"hold → push taken by all {args.devices} devices, {args.calls} calls:", report(measure(args)))


def measure(args) -> list[float]:
    from django.conf import settings
    from django.core.management import call_command

    from approvals import roles
    from approvals.calls import deciding
    from approvals.catalog.models import Server
    from approvals.push import devices
    from approvals.tokens.credentials import create_token
    from tests.fixtures.calls import pending_call
    from tests.fixtures.catalog import REFUND, make_tool
    from tests.fixtures.people import make_user
    from tests.push.service import PushService

    call_command("migrate", verbosity=0)
    settings.WEB_PUSH_ALLOWED_HOSTS = ["127.0.0.1"]
    service = PushService()
    try:
        operator = make_user("bench-operator", roles.OPERATOR)
        for number in range(args.devices):
            devices.turn_on(operator, service.browser(f"device-{number}").subscription, f"device {number}")
        shop = Server.objects.create(name="Shop", slug="shop", transport="stdio", command="true", tool_prefix="shop_")
        tool, token = make_tool(shop, **REFUND), create_token("bench agent")[0]
        took = []
        for number in range(args.calls):
            started = time.perf_counter()
            call = pending_call(token, tool, {"order_id": number + 1, "amount": 10})
            pushes = service.pushes(args.devices * (number + 1), timeout=30)[-args.devices :]
            took.append(max(push.at for push in pushes) - started)
            # Denied, so that the token's cap of waiting calls never refuses the next one.
            deciding.decide(call.pk, operator, False, "measured")
        return took
    finally:
        service.close()


def report(took: list[float]) -> str:
    ordered = sorted(took)
    p50, p95 = ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, worst {ordered[-1] * 1000:.0f} ms"


if __name__ == "__main__":
    main()
