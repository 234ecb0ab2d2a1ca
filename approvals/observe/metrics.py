"""The console's Prometheus metrics, added up over every process of a deployment.

Each process (a web process, the celery worker, a command) writes its samples into files of its own
in PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess mode), and /metrics adds them
up: a scrape of any one web process gives the whole deployment. What counts a committed fact
(a call's end, a webhook delivery) is taken when its transaction commits, so a change rolled
back counts nothing. What the database holds (pending calls, entries awaiting review, the last
verification) is read at scrape time instead (console/metrics.py).
"""

import atexit
import functools
import glob
import os
import re
import socket
import threading

from django.db import transaction
from prometheus_client import Counter, Gauge, Histogram, values
from prometheus_client.multiprocess import mark_process_dead
from prometheus_client.process_collector import ProcessCollector

# prometheus-client parses a file's name on "_": the name of a host keeps none.
HOST = socket.gethostname().replace("_", "-")


def process_id() -> str:
    """This process among all those writing to the folder: containers sharing one volume may each run as pid 1."""
    return _process_id


def name_this_process():
    global _process_id
    _process_id = f"{HOST}-{os.getpid()}"


# Asked at every count (prometheus-client checks that its files are still this process's): named once, and again in
# a forked child, rather than by a getpid() each time.
_process_id = ""
name_this_process()
os.register_at_fork(after_in_child=name_this_process)


def folder() -> str:
    return os.environ["PROMETHEUS_MULTIPROC_DIR"]


# The default registry is left alone: this process's samples are read back from the files, with every other's.
UNREGISTERED = {"registry": None}
# Chosen here rather than by prometheus-client from the environment at its import: the files are named
# by host and pid, and every process of the console is in multiprocess mode whatever imported the client first.
values.ValueClass = values.MultiProcessValue(process_id)
os.makedirs(folder(), exist_ok=True)

# From a rule's instant allow or deny (milliseconds) to an operator's decision (up to the approval timeout).
DECISION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
# From a lookup answered in a few milliseconds to UPSTREAM_CALL_TIMEOUT_SECONDS.
UPSTREAM_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

CALLS = Counter(
    "mcp_console_calls",
    "Calls ended, by server and outcome: completed, failed, denied, expired, cancelled, rejected, or refused "
    "(not recorded: its tool awaits review, or its token has its cap of pending calls).",
    ["server", "outcome"],
    **UNREGISTERED,
)
DECISIONS = Histogram(
    "mcp_console_decision_seconds",
    "From a call's arrival to its decision (a rule's, or an operator's), by the action of the rule that decided "
    "or asked: allow, deny or ask.",
    ["action"],
    buckets=DECISION_BUCKETS,
    **UNREGISTERED,
)
UPSTREAM = Histogram(
    "mcp_console_upstream_seconds",
    "Time a call spent upstream, from sending it to the answer or the failure.",
    ["server"],
    buckets=UPSTREAM_BUCKETS,
    **UNREGISTERED,
)
UPSTREAM_ERRORS = Counter(
    "mcp_console_upstream_errors",
    "Calls upstream that failed, by kind: timeout, unavailable (retryable), refused (an error the server "
    "answered), protocol (a broken exchange) or malformed (a result that failed its checks).",
    ["server", "kind"],
    **UNREGISTERED,
)
WEBHOOK_DELIVERIES = Counter(
    "mcp_console_webhook_deliveries",
    "Webhook delivery attempts by outcome: delivered, retrying (failed, another attempt due) or failed (no more).",
    ["outcome"],
    **UNREGISTERED,
)

# The process metrics, per process ("pid": host and pid) while it lives; CPU time adds up over them all.
PROCESS_GAUGES = (
    ("process_resident_memory_bytes", "Resident memory size in bytes."),
    ("process_virtual_memory_bytes", "Virtual memory size in bytes."),
    ("process_open_fds", "Number of open file descriptors."),
    ("process_max_fds", "Maximum number of open file descriptors."),
    ("process_start_time_seconds", "Start time of the process since unix epoch in seconds."),
)
SAMPLE_SECONDS = 15


def after_commit(count):
    # Robust: a count that fails must not fail what it counts.
    transaction.on_commit(count, robust=True)


def call_ended(server: str, outcome: str):
    after_commit(CALLS.labels(server, outcome).inc)


def call_decided(action: str, seconds: float):
    after_commit(lambda: DECISIONS.labels(action).observe(max(seconds, 0.0)))


def webhook_attempted(outcome: str):
    after_commit(WEBHOOK_DELIVERIES.labels(outcome).inc)


def upstream_answered(server: str, seconds: float, failure: Exception | str | None = None):
    """A call upstream took `seconds`; `failure` is its exception, or the kind of failure it was."""
    UPSTREAM.labels(server).observe(seconds)
    if failure is not None:
        UPSTREAM_ERRORS.labels(server, failure if isinstance(failure, str) else failure_kind(failure)).inc()


def failure_kind(error: Exception) -> str:
    if isinstance(error, TimeoutError):
        return "timeout"
    if getattr(error, "code", None) is not None:
        return "refused"
    return "unavailable" if getattr(error, "retryable", False) else "protocol"


def rate_limited():
    rate_limited_counter().inc()


# Made on first use: a metric without labels writes its file as it is made, and a process
# that never counts (a command) should leave none behind for every scrape to read.
@functools.cache
def rate_limited_counter() -> Counter:
    return Counter(
        "mcp_console_rate_limited", "Requests to /mcp refused with 429: past their token's rate.", **UNREGISTERED
    )


class ProcessSampler:
    """Copies this process's CPU, memory and descriptors into its files every SAMPLE_SECONDS.

    Only the process that answers a scrape could read its own figures then; written here, each
    process's figures are at most that old in any scrape.
    """

    def __init__(self):
        self.reader = ProcessCollector(registry=None)
        self.cpu, self.cpu_total = (
            0.0,
            Counter("process_cpu_seconds", "Total user and system CPU time spent in seconds.", **UNREGISTERED),
        )
        self.gauges = {
            name: Gauge(name, text, multiprocess_mode="liveall", **UNREGISTERED) for name, text in PROCESS_GAUGES
        }

    def sample(self):
        figures = {sample.name: sample.value for family in self.reader.collect() for sample in family.samples}
        cpu = figures.pop("process_cpu_seconds_total", self.cpu)
        self.cpu_total.inc(max(cpu - self.cpu, 0.0))
        self.cpu = cpu
        for name, gauge in self.gauges.items():
            if name in figures:
                gauge.set(figures[name])

    def run(self, stop: threading.Event):
        while True:
            self.sample()
            if stop.wait(SAMPLE_SECONDS):
                return


_watching: dict[int, threading.Event] = {}


def watch_this_process():
    """Sample this process (a web process, a celery worker) until it exits; its live gauges go with it."""
    if os.getpid() in _watching:
        return
    forget_dead_processes()
    stop = _watching[os.getpid()] = threading.Event()
    threading.Thread(target=ProcessSampler().run, args=(stop,), name="metrics-sampler", daemon=True).start()
    atexit.register(this_process_ended, stop)


def this_process_ended(stop: threading.Event):
    stop.set()
    mark_process_dead(process_id(), folder())


LIVE_FILE = re.compile(r"gauge_live\w+?_(?P<id>.+)\.db$")


def forget_dead_processes():
    """Drop the live gauges of this host's processes that died without saying so (killed, crashed)."""
    for path in glob.glob(os.path.join(folder(), "gauge_live*_*.db")):
        found = LIVE_FILE.search(os.path.basename(path))
        host, _, pid = found["id"].rpartition("-") if found else ("", "", "")
        if host == HOST and pid.isdigit() and not alive(int(pid)):
            mark_process_dead(found["id"], folder())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


SAMPLE_FILE = re.compile(r"^(counter|histogram|summary|gauge_[a-z]+)_[^/]+\.db$")


def clear(path: str) -> int:
    """Remove the metric files in `path`, and only those: how many. For a deployment's start, before any process."""
    removed = 0
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False) and SAMPLE_FILE.match(entry.name):
            os.remove(entry.path)
            removed += 1
    return removed
