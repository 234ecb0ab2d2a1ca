"""A tool's definition history, each version compared with the one before it."""

import json
import re
from dataclasses import dataclass

SHOWN_CHANGES = 50
MAX_PATHS = 100
MAX_DEPTH = 20
PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


def changed_paths(old, new, limit=MAX_PATHS):
    """The JSON paths where two documents differ, e.g. ["description", "inputSchema.properties.id.type"]."""
    paths = []
    walk(old, new, "", 0, paths, limit)
    return paths


def walk(old, new, path, depth, paths, limit):
    if len(paths) >= limit:
        return
    # Compared by type first: in Python 1 == True and 1 == 1.0, in JSON they differ.
    if type(old) is not type(new):
        paths.append(path or "(whole definition)")
    elif isinstance(old, dict) and depth < MAX_DEPTH:
        for key in sorted(old.keys() | new.keys()):
            walk(old.get(key, Missing), new.get(key, Missing), join(path, key), depth + 1, paths, limit)
    elif isinstance(old, list) and depth < MAX_DEPTH:
        for n in range(max(len(old), len(new))):
            walk(
                old[n] if n < len(old) else Missing,
                new[n] if n < len(new) else Missing,
                f"{path}[{n}]",
                depth + 1,
                paths,
                limit,
            )
    elif canonical(old) != canonical(new):
        paths.append(path or "(whole definition)")


def canonical(value):
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


class Missing:
    """Stands for a key or item one side lacks: unequal to every JSON value."""


def join(path, key):
    if PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


@dataclass
class Version:
    change: object
    paths: list | None  # None for the first version seen

    @property
    def digest_prefix(self):
        return self.change.digest[:12]


def history(tool):
    """The newest changes first, each with the paths that differ from the version before it."""
    changes = list(tool.changes.all()[: SHOWN_CHANGES + 1])
    versions = []
    for change, older in zip(changes[:SHOWN_CHANGES], changes[1:] + [None]):
        versions.append(Version(change, None if older is None else changed_paths(older.definition, change.definition)))
    return versions
