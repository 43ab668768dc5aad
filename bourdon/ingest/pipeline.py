"""The export pipeline: reader -> redact -> visibility -> erosion guard -> library commit.

``export_reader`` turns one agent's native store into its rows in the library:

1. **fingerprint**: a cheap signature of the store (every file's size and modification time,
   plus the reader, the pipeline and the redaction rules). When it equals the one of the last
   successful export, nothing is read and nothing is committed (``unchanged``).
2. **read**: the reader's fresh view of the whole store (``Reader.read``).
3. **redact**: every string of the view goes through ``bourdon.redact``; a secret becomes
   ``[redacted:<kind>]`` before anything is written anywhere.
4. **visibility**: rows keep the reader's explicit visibility, and an export never lowers the
   visibility a row already has in the library (nor the policy's default).
5. **erosion guard**: a view that would drop more than half of this reader's rows (and more
   than ten), that lost rows in three exports running, or that is empty where the store used
   to yield rows, is refused unless ``force`` is given; the result says why.
6. **commit**: ``Library.regenerate`` replaces this reader's rows from this machine and keeps
   every other row (commits of others, other machines' readers) as one commit, op ``export``.

Local state lives in the library's git-ignored ``.bourdon/``: ``watermarks/<reader>.json``
(fingerprint, last export, rows, outcome, drifting) and ``hook-failures.jsonl`` (what failed in
an agent's hook, when, and why), which ``bourdon readers`` shows.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.redact import RULES_VERSION, redact_manifest, redact_text
from bourdon.errors import BourdonError, BusyError, NotFoundError
from bourdon.merge import twoway as merge
from bourdon.model import (
    AGENTS_DIR,
    LOCAL_DIR,
    ROW_SECTIONS,
    SUFFIX,
    Visibility,
    check_agent_id,
    produced_by,
    row_key,
    row_visibility,
)
from bourdon.readers.base import Reader, ReaderContext, ReadResult, ReadStats, store_path
from bourdon.store.durable import atomic_write

if TYPE_CHECKING:  # the library (and jsonschema under it) loads only when an export writes
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

PIPELINE_VERSION: Final = "1"
EROSION_SHARE: Final = 0.5  # a view may not drop more than this share of the reader's rows...
EROSION_MIN_ROWS: Final = 10  # ...when that is more than this many rows
LOSING_STREAK: Final = 3  # exports in a row that lose rows before the guard steps in
WATERMARKS: Final = "watermarks"
HOOK_FAILURES: Final = "hook-failures.jsonl"
_FAILURES_CAP: Final = 256 * 1024  # the failure log is cut back to its last lines past this
_KEEP_FAILURES: Final = 200
_HISTORY: Final = 10

# What an export did.
COMMITTED: Final = "committed"  # a new commit holds the fresh rows
NO_OP: Final = "no_op"  # read the store; the library already held exactly these rows
UNCHANGED: Final = "unchanged"  # the store's fingerprint is the last one: nothing read
REFUSED: Final = "refused"  # the erosion guard stopped it; nothing committed
DRY_RUN: Final = "dry_run"  # computed what would change; wrote nothing
MISSING: Final = "missing"  # no store on this machine
GOOD_OUTCOMES: Final = frozenset({COMMITTED, NO_OP, UNCHANGED, DRY_RUN})
FORCED: Final = "forced past the erosion guard"  # how a forced commit's reason starts


@dataclass
class ExportResult:
    """What one export did, and why."""

    reader: str
    outcome: str
    reason: str | None = None
    store: str | None = None
    store_files: int = 0
    store_bytes: int = 0
    rows: int = 0  # rows the reader's view holds (after redaction), or the last known count
    previous_rows: int = 0  # this reader's rows from this machine in the library before
    added: int = 0
    updated: int = 0
    removed: int = 0
    changes: merge.RowChanges | None = None  # by name; dry runs only
    redacted: dict[str, int] = field(default_factory=dict)
    version: str | None = None
    digest: str | None = None
    drifting: dict[str, str] | None = None
    stats: ReadStats | None = None
    seconds: float = 0.0

    @property
    def agent_id(self) -> str:
        return self.reader

    @property
    def ok(self) -> bool:
        return self.outcome in GOOD_OUTCOMES

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reader": self.reader,
            "agent_id": self.reader,
            "outcome": self.outcome,
            "reason": self.reason,
            "store": self.store,
            "store_files": self.store_files,
            "store_bytes": self.store_bytes,
            "rows": self.rows,
            "previous_rows": self.previous_rows,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "redacted": self.redacted,
            "version_id": self.version,
            "digest": self.digest,
            "drifting": self.drifting,
            "seconds": round(self.seconds, 3),
        }
        if self.changes is not None:
            out["changes"] = self.changes.to_dict()
        if self.stats is not None:
            out["read"] = _stats_dict(self.stats)
        return out


def export_reader(
    library: Library,
    reader: Reader,
    ctx: ReaderContext,
    *,
    dry_run: bool = False,
    force: bool = False,
    provenance: Provenance | None = None,
    wait: float = 120.0,
) -> ExportResult:
    """Export one reader's store into the library (see the module docstring for the steps).

    ``dry_run`` computes what would change and writes nothing at all, not even watermarks.
    ``force`` exports even when the store looks unchanged and commits what the erosion guard
    would refuse. Raises ``BourdonError`` when the reader fails or the view does not validate.
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
    if not force:
        quick = unchanged(library.root, reader, ctx)
        if quick is not None:
            return quick
    lock = filelock.FileLock(str(_local(library.root) / f"export-{name}.lock"), thread_local=False)
    try:
        lock.acquire(timeout=wait, poll_interval=0.05)
    except filelock.Timeout:
        raise BusyError(
            f"another export of {name} has been running for over {wait:g} s; try again later"
        ) from None
    try:
        return _export(library, reader, name, ctx, who, dry_run=False, force=force, started=started)
    finally:
        lock.release()


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
) -> ExportResult:
    root = library.root
    now = _now()
    previous = load_watermark(root, name) or {}
    store = store_path(reader, ctx)
    if store is None or not store.exists():
        where = str(store) if store is not None else "no store found on this machine"
        result = ExportResult(name, MISSING, reason=f"no {name} store ({where})")
        if previous.get("rows"):
            result.drifting = _drift(name, now, f"the store is gone ({where})")
        if not dry_run and previous:  # a store never seen here leaves no trace
            _save(root, name, {**previous, **_mark(result, now), "fingerprint": None})
        return _done(result, started)

    fingerprint, files, size = store_fingerprint(reader, ctx, store)
    result = ExportResult(name, COMMITTED, store=str(store), store_files=files, store_bytes=size)
    if not dry_run and not force and _same(root, name, previous, fingerprint):
        return _done(_skip(root, name, previous, result, now), started)

    read = _read(reader, ctx, name, store)
    fresh = _shape(read.manifest, reader, name)
    fresh, findings = redact_manifest(fresh)
    current = _current(library, name)
    fresh = keep_visibility(fresh, current)
    source = {"kind": "reader", "name": name, "machine": who.machine}
    mine = _keys(current, source)
    theirs = _keys(fresh, None)
    result.rows = len(theirs)
    result.previous_rows = len(mine)
    result.redacted = findings.to_dict()
    result.stats = read.stats
    history = [int(n) for n in previous.get("history") or [] if isinstance(n, int)]
    before = len(mine) or int(previous.get("rows") or 0)
    if not theirs and before:
        result.drifting = _drift(
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
        _save(root, name, {**previous, **_mark(result, now)})
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
    _save(
        root,
        name,
        {
            **_mark(result, now),
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
    started = time.perf_counter()
    name = check_agent_id(reader.name, "reader name")
    previous = load_watermark(root, name)
    if not previous or not previous.get("fingerprint"):
        return None
    store = store_path(reader, ctx)
    if store is None or not store.exists():
        return None
    fingerprint, files, size = store_fingerprint(reader, ctx, store)
    if not _same(root, name, previous, fingerprint):
        return None
    result = ExportResult(name, UNCHANGED, store=str(store), store_files=files, store_bytes=size)
    return _done(_skip(root, name, previous, result, _now()), started)


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
    _save(root, name, {**previous, "checked_at": now, "outcome": UNCHANGED, "reason": None})
    return result


# -- the steps ------------------------------------------------------------------------------


def _read(reader: Reader, ctx: ReaderContext, name: str, store: Path) -> ReadResult:
    try:
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
    """The reader's view as a regeneration: this agent's id, a type, rows without ``source``."""
    fresh: dict[str, Any] = {
        k: copy.deepcopy(v) for k, v in view.items() if k not in ("spec_version", "last_updated")
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


def keep_visibility(fresh: dict[str, Any], current: Mapping[str, Any] | None) -> dict[str, Any]:
    """Never lower a row's visibility: a row the library already holds keeps at least its level.

    Rows keep the reader's explicit visibility; a row whose key the library already has at a
    higher level (set by hand, by a private tag, or by another writer) is raised to that level.
    A reader's policy may add tags but not lower the default.
    """
    if not current:
        return fresh
    policy = current.get("visibility_policy")
    policy = policy if isinstance(policy, Mapping) else {}
    given = fresh.get("visibility_policy")
    if isinstance(given, Mapping):
        given = dict(given)
        old, new = _level(policy.get("default")), _level(given.get("default"))
        if old is not None and (new is None or new < old):
            given["default"] = str(old)
        fresh["visibility_policy"] = given
        after_policy: Mapping[str, Any] = {
            **policy,
            **given,
            "private_tags": _union(policy.get("private_tags"), given.get("private_tags")),
            "team_tags": _union(policy.get("team_tags"), given.get("team_tags")),
        }
    else:
        after_policy = policy
    for section in ROW_SECTIONS:
        rows = fresh.get(section)
        held = current.get(section)
        if not isinstance(rows, list) or not isinstance(held, list):
            continue
        levels = {
            row_key(section, r): row_visibility(r, policy) for r in held if isinstance(r, Mapping)
        }
        out = []
        for row in rows:
            if isinstance(row, Mapping):
                was = levels.get(row_key(section, row))
                if was is not None and row_visibility(row, after_policy) < was:
                    row = {**row, "visibility": str(was)}
            out.append(row)
        fresh[section] = out
    return fresh


def erosion(
    mine: set[tuple[str, ...]],
    fresh: set[tuple[str, ...]],
    history: list[int],
    *,
    before: int = 0,
) -> str | None:
    """Why committing ``fresh`` over this reader's rows ``mine`` looks like data loss, or None.

    ``history`` holds the row counts of the last committed exports, oldest first; ``before``
    how many rows the store yielded last time.
    """
    if before and not fresh:
        return (
            f"the store yielded no rows where it yielded {before} before; its format may "
            "have changed (drifting): check 'bourdon readers'"
        )
    dropped = len(mine - fresh)
    if mine and dropped > EROSION_MIN_ROWS and dropped > EROSION_SHARE * len(mine):
        return (
            f"it would drop {dropped} of the {len(mine)} rows this reader exported before "
            f"(more than {EROSION_SHARE:.0%})"
        )
    counts = [*history, len(fresh)]
    streak = 0
    for i in range(len(counts) - 1, 0, -1):
        if counts[i] >= counts[i - 1]:
            break
        streak += 1
    if streak >= LOSING_STREAK:
        trail = " -> ".join(str(n) for n in counts[-LOSING_STREAK - 1 :])
        return f"the store lost rows in {LOSING_STREAK} exports in a row ({trail})"
    return None


def _keys(data: Mapping[str, Any] | None, source: Mapping[str, str] | None) -> set[tuple[str, ...]]:
    """Row keys (section first) of ``data``; with ``source``, only the rows it produced."""
    found: set[tuple[str, ...]] = set()
    if not data:
        return found
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if not isinstance(rows, list):
            continue
        for row in rows:
            if not isinstance(row, Mapping):
                continue
            if source is not None and not produced_by(row, source):
                continue  # the same rule the regeneration applies: committed rows are not its
            found.add((section, *row_key(section, row)))
    return found


# -- fingerprints -------------------------------------------------------------------------


def store_fingerprint(reader: Reader, ctx: ReaderContext, store: Path) -> tuple[str, int, int]:
    """A cheap signature of a store: (digest, files, bytes). Reads no file, only their stats.

    It covers every file under the store (a file store: the file and its SQLite companions),
    plus whatever the reader, the pipeline or the redaction rules are, so a new bourdon
    re-exports an unchanged store. A reader may name more places it reads with an optional
    ``watch_paths(ctx)`` method.
    """
    h = hashlib.sha256()
    ident = [
        PIPELINE_VERSION,
        RULES_VERSION,
        type(reader).__module__,
        type(reader).__qualname__,
        str(getattr(reader, "version", "")),
        str(ctx.tz),
        ctx.machine,
    ]
    h.update(json.dumps(ident).encode())
    roots = [store]
    extra: Callable[[ReaderContext], list[Path]] | None = getattr(reader, "watch_paths", None)
    if callable(extra):
        with contextlib.suppress(Exception):
            roots += [Path(p) for p in extra(ctx)]
    files = size = 0
    for root in roots:
        for rel, st_size, mtime in _walk(root):
            h.update(f"{root}\0{rel}\0{st_size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
            files += 1
            size += st_size
    return "sha256:" + h.hexdigest(), files, size


def _walk(root: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime_ns) of every file under ``root``, in a stable order."""
    out: list[tuple[str, int, int]] = []
    try:
        st = root.stat()
    except OSError:
        return out
    if not root.is_dir():
        out.append((root.name, st.st_size, st.st_mtime_ns))
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                side = root.with_name(root.name + suffix).stat()
                out.append((root.name + suffix, side.st_size, side.st_mtime_ns))
        return out
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            out.append((prefix + "<unreadable>", 0, 0))
            continue
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((Path(entry.path), rel + "/"))
                    continue
                info = entry.stat()
            except OSError:
                continue
            out.append((rel, info.st_size, info.st_mtime_ns))
        stack.extend(reversed(subdirs))
    return out


# -- watermarks and hook failures ---------------------------------------------------------


def _local(root: Path) -> Path:
    return root / LOCAL_DIR


def watermark_path(root: Path, reader: str) -> Path:
    return _local(root) / WATERMARKS / f"{check_agent_id(reader, 'reader name')}.json"


def load_watermark(root: Path, reader: str) -> dict[str, Any] | None:
    """The last export's record for ``reader`` in the library at ``root``, if any."""
    try:
        data = json.loads(watermark_path(root, reader).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_watermarks(root: Path) -> dict[str, dict[str, Any]]:
    """Every reader's watermark in the library at ``root``, by reader name."""
    folder = _local(root) / WATERMARKS
    found: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(OSError):
        for path in sorted(folder.glob("*.json")):
            with contextlib.suppress(BourdonError):
                data = load_watermark(root, path.stem)
                if data is not None:
                    found[path.stem] = data
    return found


def drifting_surfaces(root: Path) -> list[dict[str, str]]:
    """Readers whose store used to yield rows and now yields none: {reader, checked_at, reason}."""
    return [
        dict(mark["drifting"])
        for mark in load_watermarks(root).values()
        if isinstance(mark.get("drifting"), dict)
    ]


def _drift(reader: str, now: str, reason: str) -> dict[str, str]:
    return {"reader": reader, "checked_at": now, "reason": reason}


def _mark(result: ExportResult, now: str) -> dict[str, Any]:
    return {
        "reader": result.reader,
        "agent_id": result.reader,
        "store": result.store,
        "store_files": result.store_files,
        "store_bytes": result.store_bytes,
        "checked_at": now,
        "outcome": result.outcome,
        "reason": result.reason,
        "rows": result.rows,
        "redacted": result.redacted,
        "version": result.version,
        "drifting": result.drifting,
        "read": _stats_dict(result.stats) if result.stats is not None else None,
    }


def _save(root: Path, reader: str, data: Mapping[str, Any]) -> None:
    target = watermark_path(root, reader)
    atomic_write(target, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def hook_failures_path(root: Path) -> Path:
    """Where hook failures of the library at ``root`` are recorded."""
    return _local(root) / HOOK_FAILURES


def record_hook_failure(path: Path, what: str, agent: str | None, error: str) -> dict[str, Any]:
    """Append one failure (what, agent, when, error) to the log at ``path``; never raises."""
    entry = {
        "what": what,
        "agent": agent,
        "when": _now(),
        "error": redact_text(" ".join(str(error).split()))[:2000],
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if path.stat().st_size > _FAILURES_CAP:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            atomic_write(path, ("\n".join(lines[-_KEEP_FAILURES:]) + "\n").encode("utf-8"))
    return entry


def hook_failures(path: Path) -> list[dict[str, Any]]:
    """The recorded hook failures, oldest first (unreadable lines skipped)."""
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                out.append(entry)
    return out


# -- helpers ------------------------------------------------------------------------------


def _level(value: object) -> Visibility | None:
    if isinstance(value, str) and value.upper() in Visibility.__members__:
        return Visibility[value.upper()]
    return None


def _union(a: object, b: object) -> list[Any]:
    out: list[Any] = []
    for value in (a, b):
        items = value if isinstance(value, list) else [value] if value is not None else []
        out += [i for i in items if i not in out]
    return out


def _stats_dict(stats: ReadStats) -> dict[str, Any]:
    data = asdict(stats)
    data["problems"] = [redact_text(p) for p in stats.problems[:10]]
    return data


def _done(result: ExportResult, started: float) -> ExportResult:
    result.seconds = time.perf_counter() - started
    return result


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
