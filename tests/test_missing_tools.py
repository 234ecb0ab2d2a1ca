"""A newcomer's machine without one of the tools some tests run: those tests skip, naming it and its package."""

import pytest

from tests.audit.receivers import Collector, Rsyslog
from tests.fixtures import tools


def skip_reason(start) -> str:
    with pytest.raises(pytest.skip.Exception) as skipped:
        start()
    return str(skipped.value)


def test_it_skips_rsyslogs_tls_receiver_without_its_gnutls_driver_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "RSYSLOG_MODULES", (str(tmp_path / "lib" / "*" / "rsyslog"),))
    monkeypatch.setitem(tools.TOOLS, "rsyslogd", (lambda: "/usr/sbin/rsyslogd", "rsyslog"))
    assert "apt-get install rsyslog-gnutls" in skip_reason(lambda: Rsyslog(tmp_path, tls=True))

    (tmp_path / "lib" / "x86_64-linux-gnu" / "rsyslog").mkdir(parents=True)
    (tmp_path / "lib" / "x86_64-linux-gnu" / "rsyslog" / "lmnsd_gtls.so").touch()
    assert tools.missing("rsyslog TLS driver (lmnsd_gtls)") == ""


def test_it_skips_what_needs_a_command_absent_from_path_naming_its_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert tools.missing("nginx", "openssl") == "nginx is not installed (apt-get install nginx-light)"
    assert "apt-get install openssl" in skip_reason(lambda: Collector(tmp_path, []))
    assert "apt-get install prometheus" in skip_reason(lambda: tools.require("promtool"))
