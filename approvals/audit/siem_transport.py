"""Sending forwarded audit events to the SIEM: the only code that talks to it, with one error type.

A batch counts as acknowledged only when the receiver has read all of it. Syslog over TCP has
no acknowledgement of its own, and bytes a socket accepted may die in a buffer with a receiver
that stops, so each batch is one connection: the batch is sent, the sending side closed (with
TLS, a close_notify), and the batch is acknowledged when the receiver, having read to that end,
closes its side too. A receiver that stopped first resets the connection instead. A HEC
collector acknowledges a batch by answering 2xx.

Every wait is bounded by AUDIT_FORWARD_TIMEOUT_SECONDS.
"""

import contextlib
import socket
import ssl
from urllib.parse import urlsplit, urlunsplit

import httpx

SCHEMES = ("syslog+tcp", "syslog+tls", "https")
MAX_RESPONSE_BYTES = 64 * 1024


class ForwardError(Exception):
    """A batch the receiver did not acknowledge: no connection, a reset, a timeout or an answer other than 2xx."""


def url_problem(url: str) -> str:
    """Why `url` cannot be AUDIT_FORWARD_URL, or ""."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the URL cannot be read"
    if parts.scheme not in SCHEMES:
        return "it must start with syslog+tcp://, syslog+tls:// or https://"
    if not parts.hostname:
        return "it names no host"
    if parts.scheme.startswith("syslog") and port is None:
        return "a syslog URL needs a port"
    if parts.username or parts.password:
        return "it may not carry a user name or password (the HEC token is AUDIT_FORWARD_TOKEN)"
    return ""


def destination(url: str) -> str:
    """The URL without its query and fragment: what the cursor and the audit page name."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def tls_context(ca_file: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file or None)


class SyslogSender:
    def __init__(self, url: str, timeout: float, ca_file: str = ""):
        parts = urlsplit(url)
        self.address = (parts.hostname, parts.port)
        self.timeout = timeout
        self.context = tls_context(ca_file) if parts.scheme == "syslog+tls" else None

    def send(self, entries: list[bytes]):
        try:
            with socket.create_connection(self.address, timeout=self.timeout) as raw:
                if self.context is None:
                    raw.sendall(b"".join(entries))
                    raw.shutdown(socket.SHUT_WR)
                    self.await_close(raw)
                else:
                    with self.context.wrap_socket(raw, server_hostname=self.address[0]) as tls:
                        tls.sendall(b"".join(entries))
                        self.await_close_notify(tls)
        except ForwardError:
            raise
        except (OSError, ssl.SSLError) as error:
            raise ForwardError(f"{self.address[0]}:{self.address[1]}: {error}") from error

    def await_close(self, sock):
        if sock.recv(1):
            raise ForwardError("the receiver sent data where it should have closed the connection")

    def await_close_notify(self, tls):
        # Many receivers (rsyslog among them) close the connection without a close_notify of
        # their own: still an end reached after reading everything sent before ours.
        with contextlib.suppress(ssl.SSLEOFError):
            tls.unwrap()


class HecSender:
    def __init__(self, url: str, timeout: float, ca_file: str = "", token: str = ""):
        self.url, self.timeout, self.ca_file = url, timeout, ca_file
        self.headers = {"Content-Type": "application/json"} | ({"Authorization": f"Splunk {token}"} if token else {})

    def send(self, entries: list[bytes]):
        try:
            with (
                httpx.Client(timeout=self.timeout, verify=tls_context(self.ca_file), follow_redirects=False) as client,
                client.stream("POST", self.url, content=b"\n".join(entries), headers=self.headers) as answer,
            ):
                body = next(answer.iter_bytes(MAX_RESPONSE_BYTES), b"")
        except httpx.HTTPError as error:
            raise ForwardError(f"{destination(self.url)}: {error or type(error).__name__}") from error
        if not 200 <= answer.status_code < 300:
            text = body.decode("utf-8", "replace")[:200]
            raise ForwardError(f"{destination(self.url)} answered {answer.status_code}: {text}")


def sender_for(url: str, *, timeout: float, ca_file: str, token: str):
    if urlsplit(url).scheme == "https":
        return HecSender(url, timeout, ca_file, token)
    return SyslogSender(url, timeout, ca_file)
