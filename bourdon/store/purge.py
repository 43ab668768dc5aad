"""Purge: rewrite a library's whole history so no commit, tree or blob holds a text, or an
entity, any more (``bourdon purge``).

Two kinds: ``text`` (every string of every manifest, every other file, every commit message and
author line has the text replaced by ``[purged]``; a manifest is rewritten as data, so the
result is valid YAML, and a row whose field no longer validates is kept unserved, as the lenient
reader keeps any such row) and ``entity`` (every version of every manifest loses the entity's
rows and mentions, as ``forget`` removes them from the live one; commit trailers that name it,
``Bourdon-Conflict`` and ``Bourdon-Lowered``, are dropped).

Under the library lock for the whole run: the history is replayed (``git.rewrite``), with
``Bourdon-Digest`` (and every digest a message names) recomputed for the new content and
commit ids in messages mapped to the new ones; the refs move in one transaction (the published
branch's own history, ``refs/bourdon/*``, is rewritten with the same transform; fetched
``refs/remotes/*`` are dropped); the working files are set to the new HEAD; caches under
``.bourdon/`` that name commits or hold manifest text are dropped (they are rebuilt), the sync
state is given the new ids and a purge marker, so the next ``bourdon sync`` force-updates each
remote's published branch; then every reflog is expired and ``git gc --prune=now`` removes the
old objects. An interrupted purge leaves either the old refs (nothing visible changed) or the
new ones; run the same purge again to finish: it rewrites nothing more and prunes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from bourdon.digest import RowCache, digest
from bourdon.errors import InputError, ManifestError
from bourdon.formats import reading, yamlio
from bourdon.model import LOCAL_DIR, SUFFIX, fold
from bourdon.store import forgetting
from bourdon.store.durable import atomic_write
from bourdon.store.git import rewrite
from bourdon.store.layout import AGENTS, INTENT, STAGING
from bourdon.store.provenance import OPERATOR, identity

if TYPE_CHECKING:
    from bourdon.store.library import Library

REPLACEMENT: Final = "[purged]"
# Under .bourdon/: what a purge keeps (the lock, the sync state it rewrites); the rest there
# is a cache or a record that may hold the purged text, dropped or scrubbed.
_KEEP: Final = ("write.lock", "write.pid")
_CACHES: Final = ("cache", "history", "resume")  # resume: a reader's state, store text
_DIGESTS = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass
class PurgeReport:
    """What a purge rewrote (or, with ``dry_run``, would rewrite)."""

    kind: str  # "text" or "entity"
    dry_run: bool
    commits: int = 0  # commits whose content or message changed
    total_commits: int = 0
    files: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)  # force-updated on their next sync
    fsck_clean: bool | None = None
    fsck_said: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "dry_run": self.dry_run,
            "commits": self.commits,
            "total_commits": self.total_commits,
            "files": self.files,
            "agents": self.agents,
            "refs": self.refs,
            "remotes": self.remotes,
            "fsck_clean": self.fsck_clean,
        }


class _Transform:
    """The file and message changes of one purge, with the digests it changed."""

    def __init__(self, text: str | None, entity: str | None) -> None:
        self.text, self.entity = text, entity
        self.digests: dict[str, str] = {}
        # Most rows are the same from one version to the next: their YAML and JSON are kept.
        self._yaml: yamlio.RowCache = {}
        self._json: RowCache = {}

    def _absent(self, data: bytes) -> bool:
        """Surely not in this file: its bytes lack the text (or a word of the name), and it has
        no escape sequence or folded line that could spell it otherwise."""
        if b"\\" in data:
            return False
        if self.text is not None:
            return " " not in self.text and self.text.encode() not in data
        assert self.entity is not None
        folded = data.decode("utf-8", "replace").casefold()
        return any(word not in folded for word in fold(self.entity).split())

    def blob(self, path: str, data: bytes) -> bytes:
        if path.endswith(SUFFIX):
            return self._manifest(path, data)
        if self.text is not None:
            return data.replace(self.text.encode(), REPLACEMENT.encode())
        return data

    def _manifest(self, path: str, data: bytes) -> bytes:
        if self._absent(data):
            return data
        try:
            parsed = yamlio.load(data, what=path)
        except ManifestError:
            parsed = None
        if not isinstance(parsed, Mapping):
            return data if self.text is None else data.replace(self.text.encode(), b"[purged]")
        if self.text is not None:
            new = _replace(parsed, self.text)
            if new == parsed:
                return data.replace(self.text.encode(), REPLACEMENT.encode())
        else:
            assert self.entity is not None
            new, counts = forgetting.forget(parsed, forgetting.names_of(parsed, self.entity))
            if not sum(counts.values()):
                return data
        out = yamlio.dump(new, cache=self._yaml)
        if self.text is not None:  # a comment, or a key, may hold it too
            out = out.replace(self.text.encode(), REPLACEMENT.encode())
        self._remember(parsed, new)
        return out

    def _remember(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """The digest the library gave the old manifest -> the one it gives the new."""
        with contextlib.suppress(ManifestError, ValueError):
            before = digest(reading.read_data(dict(old)).data, self._json)
            self.digests[before] = digest(reading.read_data(dict(new)).data, self._json)

    def message(self, text: str, commits: Mapping[str, str]) -> str:
        text = rewrite.map_ids(text, commits)
        text = _DIGESTS.sub(lambda m: self.digests.get(m.group(0), m.group(0)), text)
        if self.text is not None:
            return text.replace(self.text, REPLACEMENT)
        assert self.entity is not None
        wanted = fold(self.entity)
        return "".join(
            line
            for line in text.splitlines(keepends=True)
            if not (
                line.startswith(("Bourdon-Conflict:", "Bourdon-Lowered:")) and wanted in fold(line)
            )
        )

    def name(self, value: bytes) -> bytes:
        if self.text is None:
            return value
        return value.replace(self.text.encode(), REPLACEMENT.encode())


def _replace(value: Any, text: str) -> Any:
    if isinstance(value, str):
        return value.replace(text, REPLACEMENT)
    if isinstance(value, Mapping):
        return {_replace(k, text): _replace(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, text) for v in value]
    return value


def purge(
    library: Library,
    *,
    text: str | None = None,
    entity: str | None = None,
    dry_run: bool = False,
    remotes: Callable[[], list[str]] = list,
    mark_remote: Callable[[str, Mapping[str, str]], None] = lambda _n, _m: None,
) -> PurgeReport:
    """Rewrite the library's history without ``text`` (or the entity ``entity``).

    ``remotes`` names the remotes to force-update next sync, ``mark_remote`` records that
    (with the old -> new commit ids) in the sync state (``replicate`` owns it).
    """
    if (text is None) == (entity is None):
        raise InputError("purge needs exactly one of a text or an entity name")
    if text is not None and (not text.strip() or text == REPLACEMENT or "\n" in text):
        raise InputError("the text to purge must be one non-empty line, not '[purged]'")
    if entity is not None and not entity.strip():
        raise InputError("give the name (or an alias) of the entity to purge")
    report = PurgeReport("text" if text is not None else "entity", dry_run)
    change = _Transform(text, entity)
    with library.write_lock():
        job = rewrite.HistoryRewrite(library.repo, change.blob, change.message, change.name)
        done = job.run(write=not dry_run)
        report.total_commits = len(done.commits)
        report.commits = done.changed_commits
        report.files = sorted(done.changed_files)
        report.agents = sorted(
            {p.rsplit("/", 1)[-1][: -len(SUFFIX)] for p in done.changed_files if p.endswith(SUFFIX)}
        )
        report.refs = sorted(done.refs)
        report.remotes = remotes()
        if dry_run:
            return report
        _intent(library, done.refs.get(library.repo.branch))
        job.move_refs()
        rewrite.refresh_worktree(library.root, library.repo.branch)
        (library.root / INTENT).unlink(missing_ok=True)
        if entity is not None:
            _tombstone(library, entity)
        _local_state(library, text, entity)
        for name in report.remotes:
            mark_remote(name, done.commits)
        rewrite.expire_and_prune(library.root)
        report.fsck_clean, report.fsck_said = rewrite.fsck_clean(library.root)
    return report


def _tombstone(library: Library, entity: str) -> None:
    """A purged entity is forgotten too: its tombstone keeps a reader's export from bringing
    it back (``forgetting``), committed on top of the rewritten history."""
    stones = {*library.tombstones(), forgetting.tombstone(entity)}
    if stones == library.tombstones():
        return
    raw = forgetting.format_tombstones(stones)
    head = library.repo.head()
    atomic_write(library.root / forgetting.FORGOTTEN, raw)
    text = "purge: tombstone of a purged entity\n\nBourdon-Op: purge\nBourdon-Caller: operator\n"
    who = identity(OPERATOR)
    library.repo.commit_files(
        {forgetting.FORGOTTEN: raw}, text, parent=head, author=who, committer=identity("bourdon")
    )
    library.repo.sync_index()


def _intent(library: Library, new_head: str | None) -> None:
    """Before the refs move: the write intent crash recovery reads, naming every manifest of
    the old and the new HEAD, so a purge killed before its files are rewritten has them set to
    the new HEAD when the library next opens (not adopted back as hand edits)."""
    repo, paths = library.repo, set()
    for commit in (repo.head(), new_head):
        if commit:
            for folder in (AGENTS, STAGING):
                paths.update(repo.list_files(commit, folder))
    record = {"paths": sorted(paths), "head": repo.head(), "pid": os.getpid(), "op": "purge"}
    atomic_write(library.root / INTENT, json.dumps(record).encode("utf-8"))


def _local_state(library: Library, text: str | None, entity: str | None = None) -> None:
    """Drop the caches under ``.bourdon/`` (they name old commits or hold manifest text) and,
    for a text, scrub every other file kept there; for an entity, drop the files crash
    recovery put aside that name it."""
    local = library.root / LOCAL_DIR
    for name in _CACHES:
        shutil.rmtree(local / name, ignore_errors=True)
    (local / "sync" / "published.json").unlink(missing_ok=True)
    if entity is not None:
        words = fold(entity).split()
        for path in (local / "recovered").glob("*"):
            with contextlib.suppress(OSError):
                seen = path.read_bytes().decode("utf-8", "replace").casefold()
                if path.is_file() and all(w in seen for w in words):
                    path.unlink()
    if text is None or not local.is_dir():
        return
    needle = text.encode()
    for path in local.rglob("*"):
        if path.is_file() and path.name not in _KEEP and not path.name.endswith(".lock"):
            with contextlib.suppress(OSError):
                data = path.read_bytes()
                if needle in data:
                    path.write_bytes(data.replace(needle, REPLACEMENT.encode()))
