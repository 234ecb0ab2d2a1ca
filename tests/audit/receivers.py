"""Receivers the forwarding tests send to, each started by the test that uses it on a free 127.0.0.1 port:
a real rsyslogd (TCP or TLS) writing each message's text to a file, and an HTTPS collector answering as told."""

import http.server
import json
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

from tests.fixtures.http_answers import send_json
from tests.fixtures.servers import free_port
from tests.fixtures.tools import require

RSYSLOGD = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with openssl."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


class Rsyslog:
    """rsyslogd -n with a config of its own: imtcp on one port, each message's MSG part a line of out.log."""

    def __init__(self, folder: Path, tls: bool):
        require("rsyslogd", *(["rsyslog TLS driver (lmnsd_gtls)", "openssl"] if tls else []))
        self.folder, self.port, self.process = folder, free_port(), None
        self.output = folder / "out.log"
        self.cert = None
        if tls:
            self.cert, key = self_signed(folder)
            driver = (
                f'DefaultNetstreamDriver="gtls" DefaultNetstreamDriverCAFile="{self.cert}" '
                f'DefaultNetstreamDriverCertFile="{self.cert}" DefaultNetstreamDriverKeyFile="{key}"'
            )
            module = 'module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.Authmode="anon")'
        else:
            driver, module = "", 'module(load="imtcp")'
        self.config = folder / "rsyslog.conf"
        self.config.write_text(
            f'global(workDirectory="{folder}" maxMessageSize="64k" {driver})\n'
            f"{module}\n"
            f'input(type="imtcp" port="{self.port}" address="127.0.0.1")\n'
            'template(name="text" type="string" string="%msg%\\n")\n'
            f'action(type="omfile" file="{self.output}" template="text")\n'
        )
        self.url = f"syslog+{'tls' if tls else 'tcp'}://127.0.0.1:{self.port}"

    def start(self):
        self.process = subprocess.Popen(
            [RSYSLOGD, "-n", "-f", str(self.config), "-i", str(self.folder / "rsyslogd.pid")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("rsyslogd did not open its port")

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(10)
        self.process = None

    def lines(self) -> list[str]:
        return self.output.read_text().splitlines() if self.output.exists() else []

    def wait_for(self, count: int, seconds: float = 20) -> list[str]:
        """The lines written so far, once there are at least `count` (rsyslog writes after it acknowledged)."""
        deadline = time.monotonic() + seconds
        while len(lines := self.lines()) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return lines


class Collector(http.server.ThreadingHTTPServer):
    """An HTTPS collector of HEC batches: answers each POST with the next status of `answers`, then 200."""

    def __init__(self, folder: Path, answers: list[int]):
        require("openssl")
        super().__init__(("127.0.0.1", 0), CollectorHandler)
        self.cert, key = self_signed(folder)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, key)
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.answers, self.events, self.requests = list(answers), [], []
        self.url = f"https://127.0.0.1:{self.server_address[1]}/services/collector/event"
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class CollectorHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server = self.server
        server.requests.append(self.headers.get("Authorization"))
        status = server.answers.pop(0) if server.answers else 200
        if status == 200:
            decoder, text, at = json.JSONDecoder(), body.decode(), 0
            while at < len(text):
                entry, at = decoder.raw_decode(text, at)
                server.events.append(entry)
                while at < len(text) and text[at].isspace():
                    at += 1
        send_json(self, status, {"text": "Success" if status == 200 else "Server error", "code": 0})

    def log_message(self, *args):
        pass
