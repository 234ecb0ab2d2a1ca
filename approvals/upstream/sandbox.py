"""The bubblewrap command line that runs a stdio server in a sandbox (approvals.upstream.isolation decides when).

The sandbox has its own /proc (--unshare-pid: no console process is in it), /dev and
a private /tmp, and otherwise only what is bound into it read-only: the system's
programs and libraries, a few files of /etc, and what the server's command names (its
program's virtualenv or Node package, its script's directory, a `-m` package), never a
private path (var/, the database file) or the console's directory whole.
"""

import os
import shutil
from pathlib import PurePath

# The system's programs and libraries, bound read-only into every sandbox (a symlink, as merged-/usr makes
# /bin, stays one).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The sandbox has its own; a command naming /proc/<pid> must not bring the console's processes into it.
KERNEL_DIRS = ("/proc", "/sys", "/dev")
# Of /etc, what programs read to run, resolve names and trust certificates; never its secrets (shadow, ssh keys).
SYSTEM_ETC = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
    "timezone",
)


def options(keep: tuple[str, ...] = ()) -> list[str]:
    """`keep`: the capabilities the sandbox's command keeps, which only a bwrap run by root may give: those the
    switch to the stdio user inside it needs (isolation.switch_capabilities), and which it drops."""
    return [
        "--die-with-parent",
        # bwrap started by root hands its child every capability unless told not to; a server needs none.
        "--cap-drop",
        "ALL",
        *[word for name in keep for word in ("--cap-add", name)],
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # Made by a bwrap run as root, /tmp would be root's alone, and HOME for a server run as another user.
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
    ]


def open_dirs(paths: list[PurePath]) -> list[str]:
    """The directories leading to these, made traversable: a bwrap run as root makes a bind mount's parents 0700
    (root's alone), which the stdio user it switches to inside could not pass through."""
    parents = {parent for path in paths for parent in path.parents if parent != PurePath("/")}
    parents = {p for p in parents if not any(within(p, PurePath(d)) for d in (*SYSTEM_DIRS, *KERNEL_DIRS))}
    return [
        word
        for parent in sorted(parents, key=lambda p: len(p.parts))
        for word in ("--perms", "0755", "--dir", str(parent))
    ]


def system_binds() -> list[str]:
    binds = open_dirs([PurePath("/etc/passwd")])
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            binds += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds += ["--ro-bind", path, path]
    for name in SYSTEM_ETC:
        binds += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return binds


def within(path: PurePath, other: PurePath) -> bool:
    return path == other or other in path.parents


def bind_root(path: PurePath) -> PurePath:
    """What to show for a path a command names: its virtualenv or Node package whole, else its directory."""
    for parent in path.parents:
        if os.path.exists(parent / "pyvenv.cfg"):
            return parent
    if "node_modules" in path.parts:
        return PurePath(*path.parts[: path.parts.index("node_modules")])
    return path if os.path.isdir(path) else path.parent


def binds_for(paths: list[PurePath], private: tuple[str, ...], console_dir: str) -> list[PurePath]:
    """What to bind so that these paths work: for each, its bind_root, else the path alone, else nothing, never
    showing a private path or the console's directory whole."""
    private = [PurePath(p) for p in private]
    # The machine's /tmp, bound whole, would hide the sandbox's own and show every file other processes left there.
    never_whole = [*private, *([PurePath(console_dir)] if console_dir else []), PurePath("/tmp")]

    def allowed(bound: PurePath) -> bool:
        return (
            bound != PurePath("/")
            and not any(within(bound, PurePath(d)) for d in KERNEL_DIRS)
            and not any(within(bound, p) for p in private)
            and not any(within(p, bound) for p in never_whole)
        )

    chosen: list[PurePath] = []
    for path in paths:
        if any(within(path, PurePath(d)) for d in SYSTEM_DIRS):
            continue
        bound = next((c for c in (bind_root(path), path) if allowed(c)), None)
        if bound is not None and not any(within(bound, done) for done in chosen):
            chosen.append(bound)
    return chosen


def named_paths(command: list[str], cwd: str, env: dict[str, str]) -> list[PurePath]:
    """The existing files and directories a command names: itself, its arguments (`-m package` too) and
    paths in its environment's values (NODE_OPTIONS=--require /path, PYTHONPATH)."""
    words = [w for value in [*command, *env.values()] for part in value.split() for w in part.split("=")]
    words = [piece for word in words for piece in word.split(":")]  # PYTHONPATH, NODE_PATH
    found = [os.path.join(cwd, w) for w in words if "/" in w and os.path.exists(os.path.join(cwd, w))]
    for flag, module in zip(command, command[1:], strict=False):
        if flag == "-m":
            top = module.split(".")[0]
            found += [p for p in (os.path.join(cwd, top), os.path.join(cwd, top + ".py")) if os.path.exists(p)]
    if os.path.exists(command[0]):
        # A link to a program elsewhere needs its target, as a virtualenv's Python needs its home.
        found += [os.path.realpath(command[0]), *interpreter_home(command[0])]
    return [PurePath(os.path.normpath(p)) for p in found]


def interpreter_home(program: str) -> list[str]:
    """A virtualenv's Python lives elsewhere, with its standard library: the `home` its pyvenv.cfg names."""
    for parent in PurePath(program).parents:
        config = parent / "pyvenv.cfg"
        if os.path.exists(config):
            with open(config) as lines:
                homes = [line.partition("=")[2].strip() for line in lines if line.partition("=")[0].strip() == "home"]
            return [str(PurePath(home).parent) for home in homes if home]
    return []


def argv(
    command: list[str],
    cwd: str,
    env: dict[str, str],
    private: tuple[str, ...],
    console_dir: str,
    switch: tuple[list[str], tuple[str, ...]] = ([], ()),
) -> list[str]:
    """bwrap's command line; the environment reaches the child through bwrap's own, never its arguments, which
    every user may read. `switch`: the command prefix that makes the server another user inside the sandbox,
    and the capabilities that prefix needs, for a bwrap run as root."""
    prefix, keep = switch
    argv = [shutil.which("bwrap") or "bwrap", *options(keep), *system_binds()]
    bound = binds_for([*named_paths(command, cwd, env), PurePath(cwd)], private, console_dir)
    argv += open_dirs([*bound, PurePath(cwd)])
    for path in bound:
        argv += ["--ro-bind", str(path), str(path)]
    return [*argv, "--dir", cwd, "--chdir", cwd, "--", *prefix, *command]
