"""The production recipe's pieces that can be checked without Docker: its web server, nginx's configuration and the
proxy settings."""

import json
import os
import subprocess
import sys

from tests.fixtures.servers import REPO, WEB_SERVER
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


def test_it_serves_the_recipe_make_run_and_the_topology_tests_with_one_server_command():
    dockerfile = (REPO / "Dockerfile").read_text().replace("\\\n", "")
    command = json.loads(next(line for line in dockerfile.splitlines() if line.startswith("CMD "))[len("CMD ") :])
    assert command == [*WEB_SERVER, "--host", "0.0.0.0", "--port", "8000", "console.asgi:application"]
    makefile = (REPO / "Makefile").read_text()
    options = [line.split("=", 1)[1] for line in makefile.splitlines() if line.startswith("WEB_SERVER ")]
    assert ["granian", *" ".join(options).split()] == WEB_SERVER
    assert "\texec $(BIN)/granian $(WEB_SERVER) --host $(HOST) --port $(PORT) console.asgi:application\n" in makefile


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
    # So the web processes may believe it from any peer: only nginx reaches them.
    assert 'TRUSTED_PROXIES: "*"' in (REPO / "docker-compose.yml").read_text()


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
