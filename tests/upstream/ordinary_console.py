"""A stand-in console for tests/upstream/test_isolation.py: a process of an ordinary user with a var/ of its own
(CONSOLE_VAR_DIR, its database copied in), started by a dumpable shell of that user that holds the console's
keys in its environment, as `make run` was. With STDIO_ISOLATION=auto it adds the prying server with
add_server, calls it through /mcp, and prints what the server could read and its server page's isolation line.

    python ordinary_console.py PYTHON
"""

import json
import os
import sys

import django


def main(python: str) -> dict:
    os.environ["DJANGO_SETTINGS_MODULE"] = "console.settings"
    django.setup()
    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from tests.upstream.prying import add_prying_server, isolation_line, pry_through_mcp

    server = add_prying_server(python, {})
    report = pry_through_mcp()
    setup_test_environment()
    client = Client()
    client.force_login(User.objects.create_superuser("pry-admin"))
    page = client.get(reverse("server", args=[server.slug])).content.decode()
    return {"pid": os.getpid(), "report": report, "isolation": isolation_line(page)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
