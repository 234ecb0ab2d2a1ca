"""How fast this machine was while a bench ran, and keeping the bench's own pauses out of its figures."""

import gc
import os
import time
from contextlib import contextmanager


@contextmanager
def collector_off():
    """No garbage collection in this process while it measures, as timeit does: a full collection
    pauses the bench long enough to show in its figures, which would charge the pause to the console."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def cpu_times() -> list[int]:
    """The machine's CPU time counters, if it has /proc/stat.

    In /proc/stat's order: user, nice, system, idle, iowait, irq, softirq, steal, …
    """
    try:
        with open("/proc/stat") as stat:
            return [int(value) for value in stat.readline().split()[1:]]
    except OSError:
        return []


def cpu_check_ms() -> float:
    """How long this machine takes for the same pure-Python loop: the best of three, in ms."""
    times = []
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for number in range(1_000_000):
            total += number
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def stolen_share(before: list[int], after: list[int]) -> float | None:
    """How much of the CPU time the host gave to other virtual machines: on a shared host the
    figures swing with it, so a run where it is high says more about the neighbours than the console."""
    if len(before) < 8 or len(after) < 8:
        return None
    spent = [end - start for start, end in zip(before[:8], after[:8], strict=True)]
    return 100 * spent[7] / max(1, sum(spent))


def process_stat(pid) -> tuple[str, float] | None:
    """A process's command name and the CPU time it has used so far, user and system, in ms (its threads
    included), if /proc tells."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            head, _, fields = stat.read().rpartition(")")
    except OSError:
        return None
    fields = fields.split()
    return head.partition("(")[2], (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def process_cpu_ms(pid: int) -> float | None:
    """The CPU time a process has used so far, user and system, in ms (its threads included), if /proc tells."""
    found = process_stat(pid)
    return found[1] if found else None


def busy_ms(times: list[int]) -> float:
    """The machine's CPU time spent on anything but waiting, from cpu_times(), in ms over all its cores."""
    idle = sum(times[3:5])  # idle and iowait
    return (sum(times[:8]) - idle) * 1000 / os.sysconf("SC_CLK_TCK")


def named_cpu_ms(names: tuple[str, ...]) -> dict[str, float]:
    """The CPU time the processes whose command name is one of `names` have used so far, summed per name, in ms.

    A process that ends takes its time with it: read around spans in which those processes live (a server's
    backends for connections kept open, as PostgreSQL's for the console's persistent connections).
    """
    used = dict.fromkeys(names, 0.0)
    for entry in os.scandir("/proc"):
        found = process_stat(entry.name) if entry.name.isdigit() else None
        if found and found[0] in used:
            used[found[0]] += found[1]
    return used
