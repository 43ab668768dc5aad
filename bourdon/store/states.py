"""Every state of one agent's manifest, oldest first, for reads that follow a row through time.

``History`` lists the commits that touched the file (from its cache, one ``git log`` at most);
each state's blob id is read from its folder's tree, and a blob is read and parsed only when it
is new and ``wanted`` says its bytes may hold what the caller looks for. A rollback restores an
earlier blob, so its parse is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from bourdon.errors import InputError, ManifestError
from bourdon.model import check_agent_id
from bourdon.store.history import History, Version
from bourdon.store.manifests import Manifests


class State(NamedTuple):
    """One version of the file: ``data`` is ``None`` where the file was absent or not wanted;
    ``present`` says whether it was there at all."""

    version: Version
    data: dict[str, Any] | None
    present: bool


def states(
    history: History, manifests: Manifests, path: str, wanted: Callable[[bytes], bool]
) -> Iterator[State]:
    """The versions of ``path``, oldest first; ``wanted`` is asked as each state is reached,
    so it may learn from the states before. A version that is not a valid manifest is left
    out: it was never served."""
    repo = manifests.repo
    seen: dict[str, dict[str, Any] | None] = {}
    for entry in reversed(history.log(path)):
        version = history.version(entry, path)
        blob_id = repo.object_id(entry.commit, path)
        if blob_id is None:
            yield State(version, None, False)
            continue
        if blob_id in seen and seen[blob_id] is not None:
            yield State(version, seen[blob_id], True)
            continue
        found = repo.read(blob_id)
        if found is None or found[1] != "blob" or not wanted(found[2]):
            yield State(version, None, True)
            continue
        try:
            data = manifests.parse(blob_id, found[2], path)
        except ManifestError:
            continue
        seen[blob_id] = data
        yield State(version, data, True)


def agents_named(history: History, folder: str, live: list[str]) -> list[str]:
    """Agents with a manifest now (``live``) or named by any commit in ``folder``'s history."""
    named = {
        line.partition(": ")[2].strip()
        for entry in history.log(folder)
        for line in entry.message.splitlines()
        if line.startswith("Bourdon-Agent: ")
    }
    return sorted(set(live) | {n for n in named if _valid(n)})


def _valid(agent_id: str) -> bool:
    try:
        check_agent_id(agent_id)
    except InputError:
        return False
    return True
