import json
import os
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
        parser.add_argument(
            "--url",
            default=serving_url(),
            help="where the console will listen (default: http://$HOST:$PORT/, as `make run` serves, else port 8000)",
        )

    def handle(self, *args, url, **options):
        remember_url(url)
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


def serving_url() -> str:
    return f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}/"


def url_file():
    return settings.VAR_DIR / "demo-url"


def remember_url(url: str):
    """Kept for demo_agent, which a person starts in another terminal, without the port `make run` was given."""
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    url_file().write_text(url)


def remembered_url() -> str:
    """The console's URL as seed_demo was last told it, else where it would serve by default."""
    path = url_file()
    return path.read_text().strip() if path.exists() else serving_url()


def demo_passwords():
    # Kept beside the SQLite database so that every `make run` prints logins that work.
    path = settings.VAR_DIR / "demo-passwords.json"
    if path.exists():
        path.chmod(0o600)
        return json.loads(path.read_text())
    passwords = {name: secrets.token_urlsafe(12) for name in ("admin", "operator", "auditor")}
    write_private(path, json.dumps(passwords))
    return passwords


def write_private(path, text: str) -> None:
    """Writes a file of var/ that is never, even for a moment, readable by another user (a stdio server's)."""
    settings.VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as opened:
        os.fchmod(opened.fileno(), 0o600)
        opened.write(text)
