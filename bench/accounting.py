"""Where the machine's CPU goes while a path serves calls: the console's web processes, PostgreSQL, Redis, the
upstream, the bench's own client and the rest, per call, and how busy the machine was (gateway_overhead.py).

When both paths fill the machine, the ratio of their CPU per call is the most throughput the console's path can
have against direct's there.
"""

import os
import time
from dataclasses import dataclass, field

from machine import busy_ms, cpu_times, named_cpu_ms, process_cpu_ms

PATHS = ("direct", "console")
# Whose CPU a path's calls cost: processes of the machine by their command name.
SERVICES = {"PostgreSQL": "postgres", "Redis": "redis-server"}
PARTS = ("console", *SERVICES, "upstream", "client")
COLUMNS = (*PARTS, "rest", "all")


def cpu_used(console: list[int], upstream_pid: int) -> dict[str, float]:
    """The CPU time (ms) each part of the paths, and the whole machine ("machine"), has used so far."""
    services = named_cpu_ms(tuple(SERVICES.values()))
    return {
        "console": sum(process_cpu_ms(pid) or 0 for pid in console),
        **{part: services[name] for part, name in SERVICES.items()},
        "upstream": process_cpu_ms(upstream_pid) or 0,
        "client": process_cpu_ms(os.getpid()) or 0,
        "machine": busy_ms(cpu_times()),
    }


async def accounted(console: list[int], upstream_pid: int, running) -> dict[str, float]:
    """Each part's CPU time (ms) while `running` ran, the whole machine's ("machine") and the wall time ("wall")."""
    before, started = cpu_used(console, upstream_pid), time.perf_counter()
    await running
    after = cpu_used(console, upstream_pid)
    return {**{part: after[part] - before[part] for part in after}, "wall": (time.perf_counter() - started) * 1000}


@dataclass
class Accounts:
    """Per path and alternating set: each part's CPU ms per call, the rest, the whole, and the machine's share busy."""

    sets: dict[str, list[dict]] = field(default_factory=lambda: {path: [] for path in PATHS})

    def add(self, path: str, used: dict[str, float], calls: int):
        if not calls:
            return
        per_call = {part: used[part] / calls for part in PARTS}
        per_call["rest"] = max(0.0, used["machine"] / calls - sum(per_call.values()))
        per_call["all"] = used["machine"] / calls
        per_call["busy"] = used["machine"] / (used["wall"] * os.cpu_count())
        self.sets[path].append(per_call)

    def mean(self, path: str, name: str) -> float:
        values = [entry[name] for entry in self.sets[path]]
        return sum(values) / len(values) if values else float("nan")

    def rows(self, concurrency: int) -> list[str]:
        """This concurrency's rows of table_head's table."""
        lines = []
        for path in PATHS:
            cells = " | ".join(f"{self.mean(path, column):.2f}" for column in COLUMNS)
            lines.append(f"| {concurrency} | {path} | {self.mean(path, 'busy') * 100:.0f}% | {cells} |")
        return lines

    def ceiling(self) -> str:
        """The console's path's CPU per call against direct's, and the throughput that allows."""
        busy = min(self.mean(path, "busy") for path in PATHS)
        console, direct = self.mean("console", "all"), self.mean("direct", "all")
        return (
            f"the machine's CPU per call through the console is ×{console / direct:.2f} of direct's; with both "
            f"filling the machine (the less busy {busy * 100:.0f}%), the console's path serves at most "
            f"×{direct / console:.2f} of direct's calls a second"
        )


def table_head() -> list[str]:
    return [
        f"| concurrency | path | machine busy, of {os.cpu_count()} cores | CPU ms per call: {' | '.join(COLUMNS)} |",
        "|---:|---|---:|" + "---:|" * len(COLUMNS),
    ]
