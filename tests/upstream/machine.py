"""What the isolation tests need of this machine: the unprivileged user stdio servers run as, bubblewrap, and a
Python that user can run."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from approvals.upstream.isolation import DEFAULT_USER, why_no_sandbox

STDIO_USER = DEFAULT_USER  # as the Dockerfile names it


def require_sandbox(user: str = ""):
    why = why_no_sandbox(user)
    if why:
        pytest.skip(why)


def runs_as(user: str, argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, user=user, capture_output=True, timeout=30).returncode == 0
    except PermissionError:
        return False


def python_for(user: str) -> tuple[str, dict[str, str]]:
    """A Python that `user` may run, with this virtualenv's packages.

    Ours, unless it lives where that user cannot go (pyenv under root's home): then the
    system's Python of the same version, given our packages on PYTHONPATH.
    """
    if not user or runs_as(user, [sys.executable, "-c", ""]):
        return sys.executable, {}
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if os.path.exists(system) and runs_as(user, [system, "-c", ""]):
        return system, {"PYTHONPATH": sysconfig.get_paths()["purelib"]}
    pytest.skip(f"{sys.executable} is out of {user}'s reach and there is no {system} to run instead")


def python_within_reach(user: str, scratch: Path) -> list[str]:
    """The command prefix under which `user` runs this Python, with its own packages (the system's Python may
    be another release, which they do not fit): none, or where it lives under root's home (pyenv), a private
    mount namespace in which that home shows only the folder holding it."""
    if runs_as(user, [sys.executable, "-c", ""]):
        return []
    real = Path(os.path.realpath(sys.executable))
    if not real.is_relative_to("/root"):
        pytest.skip(f"{sys.executable} is out of {user}'s reach")
    top, hold = Path("/root", real.relative_to("/root").parts[0]), scratch / "python"
    show = (
        f"mkdir {hold} && mount --bind {top} {hold} && mount -t tmpfs -o mode=0755 tmpfs /root"
        f' && mkdir {top} && mount --move {hold} {top} && exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", show, "sh"]
