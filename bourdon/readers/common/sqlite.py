"""Reading a live SQLite store without ever writing beside it (Cursor, VS Code, Copilot CLI).

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from bourdon.readers.base import (
    MAX_JSON_FILE,
    ReadStats,
)

T = TypeVar("T")

BUSY_TIMEOUT: Final = 2.0
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def read_sqlite(
    path: Path, stats: ReadStats, query: Callable[[sqlite3.Connection, ReadStats], T]
) -> T | None:
    """Run ``query`` on a consistent, read-only view of the SQLite store at ``path``.

    Nothing beside the store is ever created or written, and no byte or mtime changes:

    - a rollback-journal database without a hot journal is opened ``mode=ro``;
    - a WAL database whose ``-wal`` and ``-shm`` exist (a live writer) is opened
      ``mode=ro&readonly_shm=1``: it sees committed, not yet checkpointed frames and maps the
      ``-shm`` read-only (plain ``mode=ro`` would write read marks into it, and create
      ``-wal``/``-shm`` when they are missing);
    - a WAL database without ``-wal``/``-shm`` is fully checkpointed: ``immutable=1``, then
      checked unchanged;
    - anything else (a ``-wal`` without ``-shm``, a hot journal) or any failure: the database
      and its ``-wal`` (or journal) are copied to a temporary folder and the copy is read.
      The ``-shm`` is not copied; SQLite rebuilds it from the checksummed ``-wal`` frames.

    ``query`` runs inside one read transaction, so all its statements see the same snapshot.
    It must return plain data (it may run twice); its counters are kept only once.
    """
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        stats.problem(f"{path.name}: {exc.strerror}")
        return None
    if not header.startswith(_SQLITE_MAGIC):
        stats.skipped += 1
        stats.problem(f"{path.name}: not a SQLite database")
        return None
    stats.files += 1
    wal, shm, journal = (Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))
    wal_mode = len(header) > 19 and header[18] == 2
    direct = None
    if not wal_mode and not journal.exists():
        direct = "mode=ro"
    elif wal_mode and wal.exists() and shm.exists():
        direct = "mode=ro&readonly_shm=1"
    elif wal_mode and not wal.exists() and not shm.exists():
        direct = "mode=ro&immutable=1"
    if direct is not None:
        before = _stamp(path)
        local = ReadStats()
        try:
            result = _run(f"{path.absolute().as_uri()}?{direct}", query, local)
        except sqlite3.Error as exc:
            stats.problem(f"{path.name}: {exc}; reading a copy")
        else:
            if "immutable" not in direct or (_stamp(path) == before and not wal.exists()):
                _add(stats, local)
                return result
    return _read_copy(path, wal, journal, stats, query)


def _read_copy(
    path: Path,
    wal: Path,
    journal: Path,
    stats: ReadStats,
    query: Callable[[sqlite3.Connection, ReadStats], T],
) -> T | None:
    with tempfile.TemporaryDirectory(prefix="bourdon-sqlite-") as tmp:
        copy = Path(tmp) / "store.db"
        for _attempt in range(3):
            before = (_stamp(path), _head(wal))
            try:
                shutil.copyfile(path, copy)
                for side, suffix in ((wal, "-wal"), (journal, "-journal")):
                    target = Path(f"{copy}{suffix}")
                    target.unlink(missing_ok=True)
                    if side.exists():
                        shutil.copyfile(side, target)
            except FileNotFoundError:
                continue  # checkpointed or deleted while copied: copy again
            except OSError as exc:
                stats.problem(f"{path.name}: {exc.strerror}")
                return None
            if (_stamp(path), _head(wal)) == before:
                break
        local = ReadStats()
        try:
            result = _run(str(copy), query, local)
        except sqlite3.Error as exc:
            stats.skipped += 1
            stats.problem(f"{path.name}: {exc}")
            return None
        _add(stats, local)
        return result


def _run(target: str, query: Callable[[sqlite3.Connection, ReadStats], T], local: ReadStats) -> T:
    conn = sqlite3.connect(
        target, uri=target.startswith("file:"), timeout=BUSY_TIMEOUT, isolation_level=None
    )
    try:
        conn.execute("BEGIN")  # one read transaction: every SELECT sees the same snapshot
        return query(conn, local)
    finally:
        conn.close()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _head(path: Path) -> bytes | None:
    """The WAL header (its salts change when a checkpoint restarts the log)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(32)
    except OSError:
        return None


def _add(stats: ReadStats, local: ReadStats) -> None:
    stats.records += local.records
    stats.skipped += local.skipped
    stats.too_large += local.too_large
    for text in local.problems:
        stats.problem(text)


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The names of the tables in the database."""
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def json_value(raw: object, size: object, stats: ReadStats) -> Any:
    """A JSON column value (BLOB or TEXT), or None, counted, for NULL, too large or not JSON."""
    if raw is None:
        if isinstance(size, int) and size > MAX_JSON_FILE:
            stats.too_large += 1
        else:
            stats.skipped += 1
        return None
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", "replace")
    elif isinstance(raw, str):
        text = raw
    else:
        stats.skipped += 1
        return None
    try:
        value = json.loads(text.lstrip("\ufeff"))
    except ValueError:
        stats.skipped += 1
        return None
    stats.records += 1
    return value
