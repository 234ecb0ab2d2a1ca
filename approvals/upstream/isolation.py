"""Keeping a stdio server, someone else's code, away from the console's environment, files and memory.

Layers, the strongest the machine allows first (STDIO_ISOLATION=auto):
- another user: the child runs as STDIO_USER, when the console may switch (root, or
  CAP_SETUID and CAP_SETGID): the console's files and processes are another user's. A
  console run as root never starts a child as root: without STDIO_USER it runs them as
  DEFAULT_USER, and refuses when there is no such user. The switch goes through setpriv,
  which leaves the child no capability (effective, permitted, inheritable, ambient, and
  the bounding set where the console may drop it) and no way to gain one;
- bubblewrap: the child runs in a sandbox with its own /proc (no console process in
  it), a private /tmp, an environment of only what the server spec gives, and no view
  of the console's directory or var/: only the system's directories and what its
  command names are bound in, read-only. A root console runs bwrap as root, which may
  bind what the stdio user could not reach (a Python under /root), and switches users
  inside the sandbox, as its command; elsewhere bwrap runs as the child's user;
- always, the console's processes are not dumpable (make_undumpable), so that a
  process of the same user can read neither /proc/<pid>/environ nor /proc/<pid>/mem.

STDIO_ISOLATION=user or bubblewrap requires that layer and fails each start, saying
why, where it is unavailable; auto fails them when it can give neither; none, the one
way to run a child unisolated, runs it as the console's own user, unsandboxed.
"""

import contextlib
import ctypes
import functools
import logging
import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import PurePath

from . import sandbox
from .errors import UpstreamError

log = logging.getLogger(__name__)

AUTO, USER, BUBBLEWRAP, NONE = "auto", "user", "bubblewrap", "none"
MODES = (AUTO, USER, BUBBLEWRAP, NONE)
MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
# What an isolated child keeps of the console's environment: nothing that could hold a secret.
LOCALE_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
PROBE_SECONDS = 10
PR_SET_DUMPABLE = 4
CAP_SETGID, CAP_SETUID, CAP_SETPCAP = 6, 7, 8
# Whom a root console runs stdio servers as when STDIO_USER names nobody (the Dockerfile's and `make run`'s user).
DEFAULT_USER = "mcp-stdio"
ADD_DEFAULT_USER = f"useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin {DEFAULT_USER}"


@dataclass(frozen=True)
class Isolation:
    """What the console asks for: a mode (MODES), STDIO_USER, and what no sandbox may show.

    `private` paths are shown neither whole nor in part (var/, the database file);
    `console_dir` is never bound whole, only the parts of it a server's command names.
    """

    mode: str = NONE
    user: str = ""
    private: tuple[str, ...] = ()
    console_dir: str = ""


@dataclass(frozen=True)
class Layers:
    """What a child actually runs under."""

    user: str = ""  # empty: the console's own user
    sandbox: bool = False
    inside: bool = False  # the switch to `user` is the sandbox's command, bwrap running as root

    def describe(self) -> str:
        if not (self.user or self.sandbox):
            return "none: same user, as root" if console_is_root() else "none: same user, console not dumpable"
        parts = ["bubblewrap"] if self.sandbox else []
        return ", ".join([*parts, f"user {self.user}"] if self.user else parts)


def make_undumpable() -> bool:
    """Close /proc/<pid>/environ, /proc/<pid>/mem and ptrace to processes of the same user; False off Linux."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
    return True


def effective_capabilities() -> int:
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def can_switch_users() -> bool:
    effective = effective_capabilities()
    return os.geteuid() == 0 or all(effective >> cap & 1 for cap in (CAP_SETUID, CAP_SETGID))


def console_is_root() -> bool:
    return os.geteuid() == 0


def account(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def why_no_user(name: str) -> str:
    """Why the console cannot run children as `name`; empty when it can."""
    if not name:
        return "STDIO_USER is not set"
    entry = account(name)
    if entry is None:
        if name == DEFAULT_USER:
            return f"there is no user {name!r} to run them as: create it (`{ADD_DEFAULT_USER}`) or set STDIO_USER"
        return f"there is no user {name!r} (STDIO_USER): create it, e.g. `useradd --system {name}`"
    if entry.pw_uid == 0:
        return f"STDIO_USER {name!r} is root (uid 0): name an unprivileged user"
    if not can_switch_users():
        return (
            f"the console runs as uid {os.geteuid()} without CAP_SETUID and CAP_SETGID, so it cannot start "
            f"a process as {name!r} (STDIO_USER): run it as root, or give it those capabilities"
        )
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux), which switches users and drops every capability, is not installed"
    return ""


@functools.cache
def why_no_sandbox(user: str, inside: bool = False) -> str:
    """Why bubblewrap cannot sandbox a child run as `user` (empty: the console's own); empty when it can.
    `inside`: bwrap runs as the console (root) and the switch to `user` is its command."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (`apt-get install bubblewrap`)"
    switch = (as_user(user), switch_capabilities()) if inside else ([], ())
    argv = [bwrap, *sandbox.options(switch[1]), *sandbox.system_binds(), "--", *switch[0], "/bin/true"]
    try:
        done = subprocess.run(
            [*([] if inside else as_user(user)), *argv], capture_output=True, timeout=PROBE_SECONDS, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run here: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[-500:]
        return f"bubblewrap does not run here{f' as {user!r}' if user else ''} (user namespaces off?): {said}"
    return ""


def resolve(isolation: Isolation) -> Layers:
    """The layers a child gets now; UpstreamError naming what is missing when a forced one is unavailable."""
    if isolation.mode not in MODES:
        raise UpstreamError(f"STDIO_ISOLATION is {isolation.mode!r}; it must be one of {', '.join(MODES)}")
    if isolation.mode == NONE:
        return Layers()
    name = isolation.user or (DEFAULT_USER if console_is_root() else "")
    no_user = why_no_user(name)
    if no_user and console_is_root():
        # Root's child keeps root's files and, through exec, every capability: no sandbox makes up for that.
        raise UpstreamError(f"the console runs as root, and a stdio server never does: {no_user}")
    # A forced mode, and STDIO_USER where it is set, must hold; auto takes what the machine allows.
    if no_user and (isolation.mode == USER or (isolation.mode == BUBBLEWRAP and isolation.user)):
        raise UpstreamError(f"STDIO_ISOLATION={isolation.mode}: {no_user}")
    if no_user and isolation.user:
        log.warning("stdio servers run without switching users: %s", no_user)
    user = "" if no_user else name
    if isolation.mode == USER:
        return Layers(user=user)
    if user and console_is_root() and not why_no_sandbox(user, inside=True):
        return Layers(user=user, sandbox=True, inside=True)
    no_sandbox = why_no_sandbox(user)
    if isolation.mode == BUBBLEWRAP and no_sandbox:
        raise UpstreamError(f"STDIO_ISOLATION=bubblewrap: {no_sandbox}")
    if no_sandbox and not user:
        raise UpstreamError(
            f"STDIO_ISOLATION=auto: a stdio server would see all of the console's files: {no_sandbox}, and "
            f"{no_user}; set STDIO_ISOLATION=none to run stdio servers as the console's own user anyway"
        )
    return Layers(user=user, sandbox=not no_sandbox)


def as_user(name: str) -> list[str]:
    """The command prefix that starts the child as `name`, with its group alone, holding no capability and
    unable to gain one (setuid programs and file capabilities included)."""
    if not name:
        return []
    entry = pwd.getpwnam(name)
    prefix = [shutil.which("setpriv") or "setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}"]
    prefix += ["--clear-groups", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
    if effective_capabilities() >> CAP_SETPCAP & 1:
        # Without CAP_SETPCAP (the compose recipe) the bounding set stays, and no-new-privs keeps it unusable.
        prefix.append("--bounding-set=-all")
    return [*prefix, "--"]


def switch_capabilities() -> tuple[str, ...]:
    """What the switch to another user inside a sandbox needs, and drops: as_user's capabilities."""
    held = effective_capabilities() >> CAP_SETPCAP & 1
    return ("CAP_SETUID", "CAP_SETGID", *(["CAP_SETPCAP"] if held else []))


def executable(name: str, cwd: str) -> str:
    """The command's program as an absolute path, found as the console finds it, so that it can be bound."""
    if "/" in name:
        return os.path.normpath(os.path.join(cwd, name))
    return shutil.which(name) or name


def closed_on_the_way(path: str, entry: pwd.struct_passwd) -> str:
    """The first directory on the way to `path` that `entry`'s user (its group alone) may not pass, or `path`
    itself when it may not read or enter it; empty when it may, or when `path` is not there."""
    path = PurePath(path)

    def may(step: PurePath, bit: int) -> bool:
        found = os.stat(step)
        shift = 6 if found.st_uid == entry.pw_uid else 3 if found.st_gid == entry.pw_gid else 0
        return bool(found.st_mode >> shift & bit)

    try:
        closed = next((step for step in reversed(path.parents) if not may(step, 0o1)), None)
        if closed is None and not may(path, 0o1 if os.path.isdir(path) else 0o4):
            closed = path
    except OSError:
        return ""
    return str(closed or "")


def unreachable(layers: Layers, program: str, cwd: str) -> str:
    """Why the stdio user could not start `program` in `cwd` without a sandbox run as root to bind them."""
    if not layers.user or layers.inside:
        return ""
    entry = pwd.getpwnam(layers.user)
    for path in (program, os.path.realpath(program), *sandbox.interpreter_home(program), cwd):
        closed = closed_on_the_way(path, entry)
        if closed:
            return (
                f"{layers.user!r}, whom stdio servers run as, cannot reach {path} ({closed} is closed to it): "
                f"install bubblewrap (`apt-get install bubblewrap`), in which a root console shows a server's "
                f"program to {layers.user!r}, set STDIO_USER to a user who can reach it, or put the program "
                f"(for Python, the one its virtualenv was made from) where {layers.user!r} can read it"
            )
    return ""


def why_unreachable(command: list[str], cwd: str, wanted: Isolation) -> str:
    """Why `command` could not start under the isolation asked for, its program being out of the stdio user's
    reach; empty when it can or when the isolation cannot be had at all (resolve says why)."""
    try:
        layers = resolve(wanted)
    except UpstreamError:
        return ""
    return unreachable(layers, executable(command[0], cwd), cwd) if command else ""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def prepare(command: list[str], cwd: str, env: dict[str, str], inherited: dict[str, str], isolation: Isolation):
    """How to start `command` under the isolation asked for; `inherited` is what an unisolated child keeps."""
    layers = resolve(isolation)
    if not (layers.user or layers.sandbox):
        return Launch(list(command), {**inherited, **env})
    command = [executable(command[0], cwd), *command[1:]]
    closed = unreachable(layers, command[0], cwd)
    if closed:
        raise UpstreamError(closed)
    entry = account(layers.user) if layers.user else None
    home = "/tmp" if layers.sandbox else entry.pw_dir if entry and os.path.isdir(entry.pw_dir) else "/"
    path = MINIMAL_PATH
    if os.path.dirname(command[0]) not in path.split(":"):
        path = f"{os.path.dirname(command[0])}:{path}"
    base = {name: os.environ[name] for name in LOCALE_ENV if name in os.environ} | {"PATH": path, "HOME": home}
    if entry:
        base |= {"USER": entry.pw_name, "LOGNAME": entry.pw_name}
    child_env = {**base, **env}
    if layers.sandbox:
        switch = (as_user(layers.user), switch_capabilities()) if layers.inside else ([], ())
        # The paths to bind are those the server's own settings name, not the HOME=/tmp given here.
        command = sandbox.argv(command, cwd, env, isolation.private, isolation.console_dir, switch)
    return Launch([*([] if layers.inside else as_user(layers.user)), *command], child_env)
