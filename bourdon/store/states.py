"""Every state of one agent's manifest, oldest first, for reads that follow a row through time.

Three git calls whatever the length of the history: the log of the file (from ``History``'s
cache), the id the file had after each commit (``git log --raw``), and the blobs, read in
chunks by ``cat-file --batch`` as the walk reaches them. Parsing is the caller's choice
(``Library.parse``): a row that did not change needs no parse.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from bourdon.errors import InputError
from bourdon.model import check_agent_id
from bourdon.store.history import History, Version
from bourdon.store.manifests import Manifests


class State(NamedTuple):
    """One version of the file: its blob id and bytes, ``None`` where the file was absent."""

    version: Version
    blob_id: str | None
    raw: bytes | None


def states(history: History, manifests: Manifests, path: str) -> Iterator[State]:
    """The versions of ``path``, oldest first."""
    repo = manifests.repo
    entries = list(reversed(history.log(path)))
    ids = repo.file_ids(path)
    blob_of = [
        ids[e.commit] if e.commit in ids else repo.object_id(e.commit, path) for e in entries
    ]
    blobs = repo.read_blobs(list(dict.fromkeys(b for b in blob_of if b)))
    read: dict[str, bytes] = {}
    for entry, blob_id in zip(entries, blob_of, strict=True):
        version = history.version(entry, path)
        if blob_id is None:
            yield State(version, None, None)
            continue
        while blob_id not in read:
            got = next(blobs, None)
            if got is None:
                break
            read[got[0]] = got[1]
        yield State(version, blob_id, read.get(blob_id))


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
