"""The console's keys stay its own: files only its user may read, and out of the environment of what starts it."""

import os
import subprocess
from pathlib import Path

import pytest

from console import environment

ROOT = Path(__file__).resolve().parents[1]


def test_it_reads_a_key_from_the_file_its_file_variable_names(monkeypatch, tmp_path):
    (tmp_path / "secret").write_text("the key from a file\n")
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.setenv("SECRET_KEY_FILE", str(tmp_path / "secret"))
    monkeypatch.setattr(environment, "VAR_DIR", tmp_path / "var")
    assert environment.secret("SECRET_KEY", "secret_key") == "the key from a file"
    assert not (tmp_path / "var").exists()


def test_it_keeps_embedded_keys_and_the_database_for_the_console_s_user_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(environment, "VAR_DIR", tmp_path / "var")
    (tmp_path / "var").mkdir(mode=0o755)
    (tmp_path / "var" / "console.sqlite3").write_bytes(b"")
    (tmp_path / "var" / "console.sqlite3").chmod(0o644)
    umask = os.umask(0o022)
    try:
        key = environment.secret("NO_SUCH_KEY_SET", "audit_key")
        environment.private_file(tmp_path / "var" / "console.sqlite3")
        environment.private_file(tmp_path / "elsewhere.sqlite3")
    finally:
        os.umask(umask)
    assert key == (tmp_path / "var" / "audit_key").read_text()
    modes = {path.name: path.stat().st_mode & 0o777 for path in tmp_path.rglob("*")}
    assert modes == {"var": 0o700, "audit_key": 0o600, "console.sqlite3": 0o600, "elsewhere.sqlite3": 0o600}


@pytest.mark.parametrize("key", ["SECRET_KEY", "AUDIT_KEY", "AUDIT_SIGNING_KEY", "CREDENTIALS_KEY"])
def test_it_refuses_make_run_with_a_key_in_make_s_environment(key):
    """make stays the console's parent, readable in /proc to any process of its user, a stdio server's included."""
    env = {"PATH": os.environ["PATH"], key: "a key make would keep"}
    done = subprocess.run(["make", "-s", "keys-from-files"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert f"make run: {key} is in make's environment" in done.stdout
    assert f"set {key}_FILE instead" in done.stdout
    assert subprocess.run(["make", "-s", "keys-from-files"], cwd=ROOT, env={"PATH": os.environ["PATH"]}).returncode == 0
