"""A tool's definition history: its versions, each compared with the one before, and any two compared in full."""

from dataclasses import dataclass

from approvals.protocol.tool_review import MAX_PATHS, definition_changes, path_changes

SHOWN_CHANGES = 50


def changed_paths(old, new, limit=MAX_PATHS):
    """The JSON paths where two documents differ, e.g. ["description", "inputSchema.properties.id.type"]."""
    return [change.path for change in path_changes(old, new, limit)]


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
    # One more change than is shown is read, to compare the last shown one with: the pairs stop at the shorter list.
    for change, older in zip(changes[:SHOWN_CHANGES], changes[1:] + [None], strict=False):
        versions.append(Version(change, None if older is None else changed_paths(older.definition, change.definition)))
    return versions


@dataclass
class Comparison:
    older: object
    newer: object
    changes: list


def compare(tool, older_id, newer_id) -> Comparison | None:
    """Two recorded versions of this tool side by side; None unless both ids name versions of it."""
    chosen = {change.pk: change for change in tool.changes.filter(pk__in=[older_id, newer_id])}
    if older_id not in chosen or newer_id not in chosen:
        return None
    older, newer = chosen[older_id], chosen[newer_id]
    return Comparison(older, newer, definition_changes(older.definition, newer.definition))
