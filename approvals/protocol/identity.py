"""The name and version the console gives itself, toward clients and upstream servers alike."""

from functools import cache
from importlib import metadata

NAME = "mcp-approval-console"


@cache
def version() -> str:
    """The installed package's version; "0" when it runs from a tree that was never installed."""
    try:
        return metadata.version(NAME)
    except metadata.PackageNotFoundError:
        return "0"
