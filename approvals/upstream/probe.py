"""What a stdio server started here reaches of the console, found by starting one: the server page's line.

The probe is /bin/sh started exactly as a server is (isolation.prepare: the same user switch,
capabilities, sandbox and environment). It says which user it runs as and which capabilities
it holds, and tries to open each private path (var/, the database), each file in a private
directory, and the environment and memory of the console and every ancestor of it. Nothing is
taken from the settings on trust: a layer that does not hold shows as what the probe opened.
Once per process and isolation asked for: a web process asks at start (console/lifespan.py), and logs what was found.
"""

import functools
import logging
import os
import subprocess
from dataclasses import dataclass

from . import isolation
from .errors import UpstreamError

log = logging.getLogger(__name__)

PROBE_SECONDS = 10
CAPABILITY_LINES = ("CapPrm", "CapEff", "CapAmb", "CapBnd")
# Its targets come on standard input, where naming them cannot get them bound into a sandbox. A pid is
# checked against the start time the console saw, so that a sandbox's own pid 1 or 2 is not taken for an
# ancestor; opening is enough (/proc/<pid>/mem opens only for a process that may trace the other).
SCRIPT = r"""
set -f
echo "uid $(id -u)"
grep -E '^(Cap(Prm|Eff|Amb|Bnd)|NoNewPrivs):' /proc/self/status
while read -r kind target; do
  if [ "$kind" = pid ]; then
    set -- $target; pid=$1; start=$2; stat=""
    read -r stat 2>/dev/null < "/proc/$pid/stat"
    set -- ${stat##*) }
    if [ $# -ge 20 ]; then shift 19; fi
    for file in environ mem; do
      if [ "$1" != "$start" ]; then echo "hidden /proc/$pid/$file"
      elif true 2>/dev/null < "/proc/$pid/$file"; then echo "open /proc/$pid/$file"
      else echo "refused /proc/$pid/$file"; fi
    done
  elif [ ! -e "$target" ]; then echo "hidden $target"
  elif [ -d "$target" ]; then if ls "$target" >/dev/null 2>&1; then echo "open $target"; else echo "refused $target"; fi
  elif true 2>/dev/null < "$target"; then echo "open $target"
  else echo "refused $target"; fi
done
"""


@dataclass(frozen=True)
class Finding:
    uid: int
    status: dict[str, int]  # CAPABILITY_LINES and NoNewPrivs, as /proc/self/status gives them
    outcomes: dict[str, str]  # target: open, refused or hidden

    def describe(self) -> str:
        held = self.status["CapPrm"] | self.status["CapEff"] | self.status["CapAmb"]
        caps = f"capabilities {held:x}" if held else "no capabilities"
        if not held and self.status["CapBnd"]:
            caps += (
                f" (bounding set {self.status['CapBnd']:x}{', no new privileges' if self.status['NoNewPrivs'] else ''})"
            )
        opened = [target for target, outcome in self.outcomes.items() if outcome == "open"]
        if opened:
            reach = "OPENS " + ", ".join(opened)
        else:
            reach = (
                f"opens none of {len(self.outcomes)} console paths "
                "(var/ and its files, the database, /proc of the console and its ancestors)"
            )
        return f"uid {self.uid}, {caps}; {reach}"


def lineage(pid: int) -> list[tuple[int, str]]:
    """`pid` and its ancestors, each with its start time (/proc/<pid>/stat's 22nd field)."""
    chain = []
    while pid > 0:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            break
        chain.append((pid, fields[19]))
        pid = int(fields[1])
    return chain


def targets(private: tuple[str, ...]) -> list[str]:
    lines = []
    for path in private:
        lines.append(f"path {path}")
        if os.path.isdir(path):
            lines += [f"path {os.path.join(path, name)}" for name in sorted(os.listdir(path))]
    return lines + [f"pid {pid} {start}" for pid, start in lineage(os.getpid())]


def parse(output: str) -> Finding:
    first, *rest = output.splitlines()
    status = dict.fromkeys((*CAPABILITY_LINES, "NoNewPrivs"), 0)
    outcomes = {}
    for line in rest:
        name, _, value = line.partition(":")
        if name in status:
            status[name] = int(value.strip(), 16 if name.startswith("Cap") else 10)
        else:
            outcome, _, target = line.partition(" ")
            outcomes[target] = outcome
    return Finding(int(first.removeprefix("uid ")), status, outcomes)


@functools.cache
def check(wanted: isolation.Isolation, pid: int) -> str:
    """What the probe found, or why it did not run; `pid` keys the cache to this process."""
    cwd = wanted.console_dir or "/"
    launch = isolation.prepare(["/bin/sh", "-c", SCRIPT, "probe"], cwd, {}, {"PATH": isolation.MINIMAL_PATH}, wanted)
    try:
        done = subprocess.run(
            launch.argv,
            input="\n".join(targets(wanted.private)) + "\n",
            env=launch.env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PROBE_SECONDS,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the probe did not run: {exc}"
    if done.returncode != 0 or not done.stdout.startswith("uid "):
        return f"the probe did not run: {done.stderr.strip()[-300:] or f'exit status {done.returncode}'}"
    return parse(done.stdout).describe()


def describe(wanted: isolation.Isolation, command: list[str] = ()) -> str:
    """What a stdio server (running `command`, when given) runs under, for the server page: its layers and what
    the probe found, or why it cannot start."""
    try:
        layers = isolation.resolve(wanted)
    except UpstreamError as exc:
        return f"cannot start: {exc.message}"
    closed = isolation.why_unreachable(list(command), wanted.console_dir or "/", wanted)
    if closed:
        return f"cannot start: {closed}"
    return f"{layers.describe()}; checked: {check(wanted, os.getpid())}"


def log_finding(wanted: isolation.Isolation) -> None:
    line = describe(wanted)
    alarming = line.startswith("cannot start") or "OPENS" in line or "did not run" in line
    log.log(logging.WARNING if alarming else logging.INFO, "stdio servers: %s", line)
