"""What sync keeps between runs to avoid work: the digest each manifest has once published, and
the manifests a commit holds, by blob.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

from bourdon.model import AGENTS_DIR, LOCAL_DIR, SUFFIX
from bourdon.store.durable import atomic_write

if TYPE_CHECKING:
    from bourdon.store.library import Library


def agent_files(library: Library, commit: str | None) -> dict[str, str]:
    """``file name -> blob id`` of the manifests in ``agents/`` at ``commit``."""
    if commit is None:
        return {}
    found = library.repo.read(f"{commit}:{AGENTS_DIR}")
    if not found or found[1] != "tree":
        return {}
    out = {}
    for name, (mode, oid) in library.repo.tree_entries(found[0]).items():
        text = name.decode("utf-8", "replace")
        if text.endswith(SUFFIX) and mode != b"40000":
            out[text] = oid
    return out


class PublishedCache:
    """The digest each live blob has once published: an unchanged agent is not filtered again.

    ``<level>:<live blob id> -> published digest`` and ``blob:<remote blob id> -> digest``, in
    ``.bourdon/sync/published.json``.
    """

    def __init__(self, library: Library) -> None:
        self.path = library.root / LOCAL_DIR / "sync" / "published.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self.known: dict[str, str] = data if isinstance(data, dict) else {}
        self.dirty = False

    def get(self, key: str) -> str | None:
        return self.known.get(key)

    def put(self, key: str, value: str) -> None:
        if self.known.get(key) != value:
            self.known[key] = value
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        if len(self.known) > 10_000:  # old blobs only; what is live gets filtered again
            self.known = dict(list(self.known.items())[-5_000:])
        text = json.dumps(self.known, sort_keys=True)
        with contextlib.suppress(OSError):
            atomic_write(self.path, text.encode("utf-8"))
