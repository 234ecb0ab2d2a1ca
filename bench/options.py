"""The benches' command lines: the options of a bench measured in sets taken in turn, and those of the latency
and holding benches."""

import argparse
import os

from harness import LEGACY_REVISION, MODERN_REVISION, SETUPS


def sets_options(
    parser: argparse.ArgumentParser,
    *,
    calls: int,
    sets: int,
    warmup: int,
    seconds: float,
    concurrency=(1, 10),
    what: str = "path",
    bound: str = "set",
) -> None:
    """The options of a bench that measures in sets taken in turn: how many calls, sets and warm-up calls per
    `what` and concurrency, how long at most, which revision."""
    default = " ".join(map(str, concurrency))
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(concurrency), help=f"default: {default}")
    parser.add_argument("--calls", type=int, default=calls, help=f"measured calls per {what} and concurrency ({calls})")
    parser.add_argument("--sets", type=int, default=sets, help=f"sets per {what} and concurrency, in turn ({sets})")
    parser.add_argument(
        "--warmup", type=int, default=warmup, help=f"unmeasured calls per {what} before each concurrency"
    )
    parser.add_argument("--seconds", type=float, default=seconds, help=f"at most this long per {bound} ({seconds:g})")
    parser.add_argument("--revision", default=LEGACY_REVISION, choices=[LEGACY_REVISION, MODERN_REVISION])


def checked_sets(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The arguments, refused unless the calls, sets and concurrencies are at least 1."""
    args = parser.parse_args()
    if args.calls < 1 or args.sets < 1 or min(args.concurrency) < 1:
        parser.error("--calls, --sets and --concurrency must be at least 1")
    return args


def calling_arguments(doc: str, *extra) -> argparse.Namespace:
    """The options of push_latency's run, whose usage line opens `doc`; `extra` are (flags, options) of further
    ones."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="measured calls per setup (default 200)")
    parser.add_argument("--clients", type=int, default=4, help="clients calling at once (default 4)")
    parser.add_argument(
        "--pause", type=float, default=1.0, help="seconds each client waits after an answer (default 1; 0 saturates)"
    )
    parser.add_argument("--seconds", type=float, default=90, help="at most this long per setup (default 90)")
    parser.add_argument("--revision", default=LEGACY_REVISION, choices=[LEGACY_REVISION, MODERN_REVISION])
    parser.add_argument("--setup", nargs="+", choices=SETUPS, default=SETUPS)
    for flags, options in extra:
        parser.add_argument(*flags, **options)
    args = parser.parse_args()
    if args.calls < 1 or args.clients < 1 or args.pause < 0:
        parser.error("--calls and --clients must be at least 1, --pause at least 0")
    return args


def holding_arguments(doc: str, database: str, least: int) -> argparse.Namespace:
    """hold_many's --calls, --setup and --database (the services setup's own database, `database` unless named)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls held at once (default 2000)")
    services = bool(os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL"))
    parser.add_argument("--setup", nargs="+", choices=SETUPS, default=SETUPS if services else ["embedded"])
    parser.add_argument("--database", default=database, help=f"PostgreSQL database to create and drop ({database})")
    args = parser.parse_args()
    if args.calls < least:
        parser.error(f"--calls must be at least {least}")
    return args
