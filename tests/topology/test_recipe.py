"""The production recipe's pieces that can be checked without Docker: nginx's configuration and the proxy settings."""

import os
import subprocess
import sys

from tests.fixtures.servers import REPO
from tests.fixtures.tools import require

NGINX_CONF = REPO / "deploy" / "nginx.conf"

MAIN = """
pid {tmp}/nginx.pid;
events {{}}
http {{
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    access_log off;
    include {tmp}/console.conf;
}}
"""


def self_signed_certificate(directory):
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
        + ["-keyout", str(directory / "privkey.pem"), "-out", str(directory / "fullchain.pem")],
        check=True,
        capture_output=True,
    )


def test_it_ships_an_nginx_configuration_that_nginx_accepts(tmp_path):
    require("nginx", "openssl")
    self_signed_certificate(tmp_path)
    # As in the container, but with the certificates here and the web service's name on loopback,
    # since nginx resolves an upstream's name when it reads the file.
    conf = NGINX_CONF.read_text().replace("/etc/nginx/tls/", f"{tmp_path}/").replace("web:8000", "127.0.0.1:8000")
    (tmp_path / "console.conf").write_text(conf)
    (tmp_path / "nginx.conf").write_text(MAIN.format(tmp=tmp_path))
    checked = subprocess.run(
        ["nginx", "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr


def test_it_has_nginx_send_https_and_overwrite_what_a_client_claims():
    conf = NGINX_CONF.read_text()
    assert "listen 443 ssl;" in conf and "return 301 https://$host$request_uri;" in conf
    assert "Strict-Transport-Security" in conf
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in conf
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf


SETTINGS_PROBE = "from django.conf import settings; print(getattr(settings, 'SECURE_PROXY_SSL_HEADER', None))"


def settings_with(**environment):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", **environment}
    probe = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {SETTINGS_PROBE}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.strip()


def test_it_trusts_the_forwarded_scheme_only_when_told_to():
    assert settings_with(SECURE_PROXY_SSL_HEADER="1") == "('HTTP_X_FORWARDED_PROTO', 'https')"
    assert settings_with(SECURE_PROXY_SSL_HEADER="0") == "None"
