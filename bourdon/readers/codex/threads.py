"""Codex's side files: the thread names index, the prompt history and the ``threads`` table of
``state_5.sqlite``, opened without changing a byte of the store (``open_sqlite``). Only reads.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from bourdon.readers.base import (
    ReadStats,
    clean_text,
    iter_jsonl,
    parse_time,
)
from bourdon.readers.codex.rollouts import prompt
from bourdon.readers.common.facts import SessionFacts

THREAD_COLUMNS: Final = (
    "id rollout_path created_at created_at_ms cwd title first_user_message git_origin_url "
    "parent_thread_id archived".split()
)


def db_title(thread: dict[str, Any], prompts: list[str]) -> str | None:
    """A thread's title from the database, unless it only repeats a prompt."""
    title = clean_text(thread.get("title"))
    first = clean_text(thread.get("first_user_message"))
    if not title or title == first or title in prompts:
        return None
    return title


def from_thread(sid: str, thread: dict[str, Any], name: str | None) -> SessionFacts:
    """A session from its ``threads`` row alone (its rollout file is gone)."""
    facts = SessionFacts(sid)
    created = thread.get("created_at_ms") or thread.get("created_at")
    facts.start = parse_time(created) if created else None
    facts.see_cwd(thread.get("cwd"))
    origin = thread.get("git_origin_url")
    if facts.cwd and isinstance(origin, str) and origin:
        facts.remotes[facts.cwd] = origin
    first = prompt(thread.get("first_user_message"))
    facts.prompts = [first] if first else []
    title = name or db_title(thread, facts.prompts)
    facts.titles = [title] if title else []
    return facts


def read_thread_names(path: Path, stats: ReadStats) -> dict[str, str]:
    """Thread id -> name from ``session_index.jsonl``; the last rename wins."""
    names: dict[str, str] = {}
    if path.is_file():
        for line in iter_jsonl(path, stats):
            name = clean_text(line.get("thread_name"))
            if isinstance(line.get("id"), str) and name:
                names[line["id"]] = name  # appended on every rename: the last wins
    return names


def read_history(path: Path, stats: ReadStats) -> dict[str, SessionFacts]:
    """Sessions from ``history.jsonl`` prompts, by thread id."""
    found: dict[str, SessionFacts] = {}
    if not path.is_file():
        return found
    for line in iter_jsonl(path, stats):
        sid = line.get("session_id") or line.get("conversation_id")
        text = prompt(line.get("text"))
        if not isinstance(sid, str) or not sid or not text:
            continue
        facts = found.setdefault(sid, SessionFacts(sid))
        when = parse_time(line.get("ts"))
        if when is not None and (facts.start is None or when < facts.start):
            facts.start = when
        if text not in facts.prompts:
            facts.prompts.append(text)
    return found


def read_threads(path: Path, stats: ReadStats) -> dict[str, dict[str, Any]]:
    """The ``threads`` rows by id, with whichever known columns the table has."""
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    try:
        with open_sqlite(path) as db:
            if db is None:
                stats.problem(f"{path.name}: not an SQLite database")
                return out
            stats.files += 1
            columns = {row[1] for row in db.execute("PRAGMA table_info(threads)")}
            wanted = [c for c in THREAD_COLUMNS if c in columns]
            if "id" not in wanted:
                return out
            cursor = db.execute(f"SELECT {', '.join(wanted)} FROM threads ORDER BY id")
            for values in cursor:
                row = dict(zip(wanted, values, strict=True))
                if isinstance(row.get("id"), str) and row["id"]:
                    out[row["id"]] = row
                    stats.records += 1
    except (sqlite3.Error, OSError) as exc:
        stats.problem(f"{path.name}: {exc}")
    return out


@contextlib.contextmanager
def open_sqlite(path: Path) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection that changes nothing in the store, or ``None`` if not SQLite.

    A WAL database whose ``-wal`` and ``-shm`` both exist is opened in place with
    ``mode=ro&readonly_shm=1``: it sees committed, uncheckpointed frames and writes nothing, not
    even the read marks a plain ``mode=ro`` connection stores in ``-shm``. Otherwise (a WAL
    database missing either file, where SQLite would create them, or an open that fails) the
    db, ``-wal`` and ``-shm`` are copied together to a temporary folder and the copy is read.
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        yield None
        return
    if not header.startswith(b"SQLite format 3\x00"):
        yield None
        return
    wal_mode = len(header) > 19 and 2 in (header[18], header[19])
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    db: sqlite3.Connection | None = None
    if not wal_mode or (wal.exists() and shm.exists()):
        uri = f"file:{quote(str(path))}?mode=ro" + ("&readonly_shm=1" if wal_mode else "")
        try:
            db = sqlite3.connect(uri, uri=True, timeout=2.0)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            if db is not None:
                db.close()
            db = None
    if db is not None:
        try:
            yield db
        finally:
            db.close()
        return
    with tempfile.TemporaryDirectory(prefix="bourdon-sqlite-") as tmp:
        copy = Path(tmp) / path.name
        _copy_together(path, copy)
        db = sqlite3.connect(str(copy), timeout=2.0)
        try:
            yield db
        finally:
            db.close()


def _copy_together(path: Path, copy: Path) -> None:
    """Copy a database with its -wal and -shm, again if a writer changed them meanwhile."""
    parts = ("", "-wal", "-shm")
    for _ in range(3):
        before = [_stat(Path(f"{path}{p}")) for p in parts]
        for part in parts:
            source, target = Path(f"{path}{part}"), Path(f"{copy}{part}")
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(source, target)
        if before == [_stat(Path(f"{path}{p}")) for p in parts]:
            return


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns)
