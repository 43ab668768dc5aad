"""The export pipeline: reader -> redact -> visibility -> erosion guard -> library commit.

``export_reader`` turns one agent's native store into its rows in the library:

1. **fingerprint**: a cheap signature of the store (every file's size and modification time,
   plus the reader, the pipeline and the redaction rules; ``bourdon.ingest.fingerprint``). When
   it equals the one of the last successful export, nothing is read and nothing is committed
   (``unchanged``).
2. **read**: the reader's fresh view of the whole store (``Reader.read``). A resumable reader
   (``ResumableReader.read_from``) is given the state its last read returned, kept in
   ``.bourdon/resume/`` (``bourdon.ingest.resume``), and reads only what was appended since;
   the state it returns is saved in a thread while steps 3 to 6 run; ``force`` reads whole; a
   dry run uses the state but never changes it.
3. **redact**: every string of the view goes through ``bourdon.access.redact``; a secret becomes
   ``[redacted:<kind>]`` before anything is written anywhere. A row the same library object
   redacted at an earlier export is taken as it came out then (``bourdon.ingest.redaction``).
4. **visibility**: rows keep the reader's explicit visibility, and an export never lowers the
   visibility a row already has in the library, nor the policy's default
   (``bourdon.ingest.visibility``).
5. **erosion guard**: a view that would drop more than half of this reader's rows (and more
   than ten), that lost rows in three exports running, or that is empty where the store used
   to yield rows, is refused unless ``force`` is given; the result says why
   (``bourdon.ingest.erosion``).
6. **commit**: ``Library.regenerate`` replaces this reader's rows from this machine and keeps
   every other row (commits of others, other machines' readers) as one commit, op ``export``.

What each export leaves behind is its watermark (``bourdon.ingest.watermarks``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.redact import redact_text
from bourdon.errors import BourdonError, BusyError, NotFoundError
from bourdon.ingest import watermarks
from bourdon.ingest.erosion import erosion, row_keys
from bourdon.ingest.fingerprint import store_fingerprint
from bourdon.ingest.outcome import (
    COMMITTED,
    DRY_RUN,
    FORCED,
    MISSING,
    NO_OP,
    REFUSED,
    UNCHANGED,
    ExportResult,
)
from bourdon.ingest.redaction import clean_rows_path, redact_view
from bourdon.ingest.resume import load_resume, saved_meanwhile
from bourdon.ingest.visibility import keep_visibility
from bourdon.ingest.watermarks import drift, load_watermark, mark, save_watermark
from bourdon.merge import twoway as merge
from bourdon.model import AGENTS_DIR, LOCAL_DIR, ROW_SECTIONS, SUFFIX, check_agent_id
from bourdon.readers.base import (
    Reader,
    ReaderContext,
    ReadResult,
    ResumableReader,
    store_path,
)
from bourdon.readers.listing import StoreListing

if TYPE_CHECKING:  # the library (and jsonschema under it) loads only when an export writes
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

_HISTORY: Final = 10  # row counts of the last exports a watermark keeps, for the guard

# What the quick check saw of the store: its fingerprint, files, bytes, and the walk's listing.
Seen = tuple[str, int, int, StoreListing]


def export_reader(
    library: Library,
    reader: Reader,
    ctx: ReaderContext,
    *,
    dry_run: bool = False,
    force: bool = False,
    provenance: Provenance | None = None,
    wait: float = 120.0,
    seen: Seen | None = None,
) -> ExportResult:
    """Export one reader's store into the library (see the module docstring for the steps).

    ``dry_run`` computes what would change and writes nothing at all, not even watermarks.
    ``force`` exports even when the store looks unchanged and commits what the erosion guard
    would refuse. ``seen``: what ``check`` just saw of the store, when the caller asked it
    (the quick check is not made again). Raises ``BourdonError`` when the reader fails or the
    view does not validate.
    """
    import filelock

    from bourdon.store.provenance import Provenance

    started = time.perf_counter()
    name = check_agent_id(reader.name, "reader name")
    who = provenance or Provenance(
        caller=f"reader:{name}", machine=ctx.machine or socket.gethostname()
    )
    if dry_run:
        return _export(library, reader, name, ctx, who, dry_run=True, force=force, started=started)
    if not force and seen is None:
        quick, seen = check(library.root, reader, ctx)
        if quick is not None:
            return quick
    lock = filelock.FileLock(
        str(library.root / LOCAL_DIR / f"export-{name}.lock"), thread_local=False
    )
    try:
        lock.acquire(timeout=wait, poll_interval=0.05)
    except filelock.Timeout:
        raise BusyError(
            f"another export of {name} has been running for over {wait:g} s; try again later"
        ) from None
    try:
        with _collector_paused():
            return _export(
                library,
                reader,
                name,
                ctx,
                who,
                dry_run=False,
                force=force,
                started=started,
                seen=seen,
            )
    finally:
        lock.release()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection during an export. A read builds some 10^5 objects that live
    until it ends (a resumed read as many: the saved state); the collector would walk them
    again and again, a third of a resumed export's time, to find almost nothing (a read
    makes no reference cycles to speak of). It runs again as usual afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _export(
    library: Library,
    reader: Reader,
    name: str,
    ctx: ReaderContext,
    who: Provenance,
    *,
    dry_run: bool,
    force: bool,
    started: float,
    seen: Seen | None = None,
) -> ExportResult:
    root = library.root
    now = watermarks.now()
    previous = load_watermark(root, name) or {}
    store = store_path(reader, ctx)
    if store is None or not store.exists():
        where = str(store) if store is not None else "no store found on this machine"
        result = ExportResult(name, MISSING, reason=f"no {name} store ({where})")
        if previous.get("rows"):
            result.drifting = drift(name, now, f"the store is gone ({where})")
        if not dry_run and previous:  # a store never seen here leaves no trace
            save_watermark(root, name, {**previous, **mark(result, now), "fingerprint": None})
        return _done(result, started)

    # The quick check just took the fingerprint, under no lock: taken again under the lock
    # only when the store may have moved on in between (the hook's case: it has not).
    if seen is None:
        listing = StoreListing()
        seen = (*store_fingerprint(reader, ctx, store, listing), listing)
    fingerprint, files, size, listing = seen
    result = ExportResult(name, COMMITTED, store=str(store), store_files=files, store_bytes=size)
    if not dry_run and not force and _same(root, name, previous, fingerprint):
        return _done(_skip(root, name, previous, result, now), started)

    resumable = isinstance(reader, ResumableReader)
    resume = load_resume(root, name) if resumable and not force else None
    # The reader lists and stats the store as the fingerprint's walk just did: not again.
    read = _read(reader, dataclasses.replace(ctx, listing=listing), name, store, resume)
    with contextlib.ExitStack() as saving:
        if resumable and not dry_run:
            # Saved while the view is written: the write's waits on the disk free the
            # interpreter for it.
            saving.enter_context(saved_meanwhile(root, name, read.resume, resume))
        fresh = _shape(read.manifest, reader, name)
        fresh, findings = redact_view(
            fresh, library, clean_rows_path(root, name), remember=not dry_run
        )
        current = _current(library, name)
        fresh = keep_visibility(fresh, current)
        source = {"kind": "reader", "name": name, "machine": who.machine}
        mine = row_keys(current, source)
        theirs = row_keys(fresh, None)
        result.rows = len(theirs)
        result.previous_rows = len(mine)
        result.redacted = findings.to_dict()
        result.stats = read.stats
        history = [int(n) for n in previous.get("history") or [] if isinstance(n, int)]
        before = len(mine) or int(previous.get("rows") or 0)
        if not theirs and before:
            result.drifting = drift(
                name, now, f"the store yielded no rows (it yielded {before} before)"
            )
        result.reason = erosion(mine, theirs, history, before=before)

        if dry_run:
            after, stats = merge.regenerate(current, {**fresh, "agent": fresh["agent"]}, source)
            result.changes = merge.compare(current, after)
            result.added, result.updated, result.removed = (
                stats.total_added,
                stats.total_updated,
                stats.total_removed,
            )
            result.outcome = DRY_RUN
            return _done(result, started)

        if result.reason and not force:
            result.outcome = REFUSED
            result.reason += "; pass --force to commit it anyway"
            # The fingerprint is not kept: the next export looks again instead of skipping.
            save_watermark(root, name, {**previous, **mark(result, now)})
            return _done(result, started)

        write = library.regenerate(name, fresh, reader=name, provenance=who)
        result.outcome = NO_OP if write.no_op else COMMITTED
        if result.reason:
            result.reason = f"{FORCED}: {result.reason}"
        result.added = write.stats.total_added
        result.updated = write.stats.total_updated
        result.removed = write.stats.total_removed
        result.version = write.version or previous.get("version")
        result.digest = write.digest
        history = [len(theirs)] if force else [*history, len(theirs)][-_HISTORY:]
        save_watermark(
            root,
            name,
            {
                **mark(result, now),
                "fingerprint": fingerprint,
                "exported_at": now,
                "committed_at": now if write.version else previous.get("committed_at"),
                "history": history,
            },
        )
        return _done(result, started)


def unchanged(root: Path, reader: Reader, ctx: ReaderContext) -> ExportResult | None:
    """The quick answer when the store has not changed since the last export, else ``None``.

    Stats the store's files and reads the watermark; reads no store file and needs no library
    object (nor the git and schema machinery), so a hook with nothing new returns at once.
    Records the check in the watermark.
    """
    return check(root, reader, ctx)[0]


def check(
    root: Path, reader: Reader, ctx: ReaderContext
) -> tuple[ExportResult | None, Seen | None]:
    """``unchanged``, and what it saw of the store (``None`` when it looked at nothing), for
    ``export_reader(..., seen=...)`` to go on from."""
    started = time.perf_counter()
    name = check_agent_id(reader.name, "reader name")
    previous = load_watermark(root, name)
    if not previous or not previous.get("fingerprint"):
        return None, None
    store = store_path(reader, ctx)
    if store is None or not store.exists():
        return None, None
    listing = StoreListing()
    fingerprint, files, size = store_fingerprint(reader, ctx, store, listing)
    seen = (fingerprint, files, size, listing)
    if not _same(root, name, previous, fingerprint):
        return None, seen
    result = ExportResult(name, UNCHANGED, store=str(store), store_files=files, store_bytes=size)
    return _done(_skip(root, name, previous, result, watermarks.now()), started), seen


def _same(root: Path, name: str, previous: Mapping[str, Any], fingerprint: str) -> bool:
    """Whether the last good export saw this very store (and its rows are still there)."""
    manifest = root / AGENTS_DIR / f"{name}{SUFFIX}"
    return (
        previous.get("fingerprint") == fingerprint
        and previous.get("outcome") in (COMMITTED, NO_OP, UNCHANGED)
        and (manifest.exists() or not previous.get("rows"))
    )


def _skip(
    root: Path, name: str, previous: Mapping[str, Any], result: ExportResult, now: str
) -> ExportResult:
    result.outcome = UNCHANGED
    result.reason = "the store has not changed since the last export"
    result.rows = int(previous.get("rows") or 0)
    result.drifting = previous.get("drifting")
    result.version = previous.get("version")
    save_watermark(
        root, name, {**previous, "checked_at": now, "outcome": UNCHANGED, "reason": None}
    )
    return result


# -- the steps ------------------------------------------------------------------------------


def _read(
    reader: Reader, ctx: ReaderContext, name: str, store: Path, resume: dict[str, Any] | None
) -> ReadResult:
    try:
        if isinstance(reader, ResumableReader):
            read = reader.read_from(ctx, resume)
        else:
            read = reader.read(ctx)
    except BourdonError:
        raise
    except Exception as exc:
        raise BourdonError(
            f"the {name} reader failed on {store}: {type(exc).__name__}: {redact_text(str(exc))}"
        ) from exc
    if not isinstance(read, ReadResult) or not isinstance(read.manifest, Mapping):
        raise BourdonError(f"the {name} reader returned {type(read).__name__}, not a ReadResult")
    return read


def _shape(view: Mapping[str, Any], reader: Reader, name: str) -> dict[str, Any]:
    """The reader's view as a regeneration: this agent's id, a type, rows without ``source``.

    Not a deep copy: the redaction that follows copies every mapping and list of it."""
    fresh: dict[str, Any] = {
        k: v for k, v in view.items() if k not in ("spec_version", "last_updated")
    }
    agent = fresh.get("agent")
    agent = dict(agent) if isinstance(agent, Mapping) else {}
    agent["id"] = name
    agent.setdefault("type", reader.agent_type)
    fresh["agent"] = agent
    for section in ROW_SECTIONS:
        rows = fresh.get(section)
        if isinstance(rows, list):
            # Rows are stamped with this reader's source by the library; a source the reader
            # set itself would make them look like someone else's on the next export.
            fresh[section] = [
                {k: v for k, v in r.items() if k != "source"} if isinstance(r, Mapping) else r
                for r in rows
            ]
    return fresh


def _current(library: Library, name: str) -> dict[str, Any] | None:
    try:
        return dict(library.read(name).data)
    except NotFoundError:
        return None


def _done(result: ExportResult, started: float) -> ExportResult:
    result.seconds = time.perf_counter() - started
    return result
