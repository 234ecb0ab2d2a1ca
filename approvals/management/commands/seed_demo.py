import json
import secrets

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand

from approvals import demo
from approvals.actions import servers
from approvals.catalog import sync
from approvals.catalog.models import Server
from approvals.roles import ADMIN, AUDITOR, OPERATOR

DEMO_SERVER = "Demo records"


class Command(BaseCommand):
    help = "Create demo users and the demo upstream server, then print how to log in."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="where the console will listen")

    def handle(self, *args, url, **options):
        passwords = demo_passwords()
        for username, roles in (
            ("admin", [ADMIN, OPERATOR, AUDITOR]),
            ("operator", [OPERATOR]),
            ("auditor", [AUDITOR]),
        ):
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = username == "admin"
            user.is_superuser = username == "admin"
            user.set_password(passwords[username])
            user.save()
            user.groups.set(Group.objects.filter(name__in=roles))
        server = Server.objects.filter(name=DEMO_SERVER).first()
        if server is None:
            server = servers.add_server(
                name=DEMO_SERVER,
                transport=Server.Transport.STDIO,
                trusted=True,
                accept_tools=True,
                schedule_sync=False,
                command=demo.COMMAND_LINE,
            )
        self.stdout.write(sync.sync_server(server).summary())
        self.stdout.write("")
        self.stdout.write(f"The console: {url}")
        for username in ("admin", "operator", "auditor"):
            self.stdout.write(f"  {username:9} {passwords[username]}")
        self.stdout.write("")
        self.stdout.write("To see calls arrive in the queue, start a demo agent in another terminal:")
        self.stdout.write("  .venv/bin/python manage.py demo_agent")


def demo_passwords():
    # Kept beside the SQLite database so that every `make run` prints logins that work.
    path = settings.VAR_DIR / "demo-passwords.json"
    if path.exists():
        return json.loads(path.read_text())
    passwords = {name: secrets.token_urlsafe(12) for name in ("admin", "operator", "auditor")}
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(passwords))
    path.chmod(0o600)
    return passwords
