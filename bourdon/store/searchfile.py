"""The search index's file: ``.bourdon/search.sqlite``, derived, git-ignored, rebuilt at will.

It holds nothing the manifests do not: a file that is missing, from another version of the
schema, truncated or garbage is deleted and made again, empty (``bourdon.query.search`` then
fills it from the index's rows). Several processes (a server and a CLI) may have it open: it
is in WAL mode, every transaction is short, and a writer waits at most ``BUSY_MS`` for a lock
before the caller is told (``sqlite3.OperationalError``) and answers from memory instead.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import Final

from bourdon.store.layout import LOCAL

FILE: Final = f"{LOCAL}/search.sqlite"
BUSY_MS: Final = 250
log = logging.getLogger("bourdon.search")


def search_file(root: Path) -> Path:
    return root / FILE


def _remove(path: Path) -> None:
    for extra in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{extra}").unlink()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, check_same_thread=False)
    conn.isolation_level = None  # transactions are explicit, and short
    conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # derived data: a lost tail is rebuilt
    return conn


def _usable(conn: sqlite3.Connection, version: int) -> bool:
    """Is the file a database of this schema, whole? (a truncated file fails quick_check)"""
    (found,) = conn.execute("PRAGMA user_version").fetchone()
    if found != version:
        return False
    (verdict,) = conn.execute("PRAGMA quick_check").fetchone()
    return bool(verdict == "ok")


def open_search_file(root: Path, schema: str, version: int) -> sqlite3.Connection:
    """The library's search file, made with ``schema`` (a script) when it is not usable.

    Raises ``sqlite3.OperationalError`` when another process holds it locked past the busy
    timeout; any other damage is repaired here by starting the file again.
    """
    path = search_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _attempt in range(2):
        conn = _connect_or_none(path)
        if conn is not None:
            try:
                if _usable(conn, version):
                    return conn
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                    conn.executescript(schema + f"\nPRAGMA user_version={int(version)};")
                    return conn
            except sqlite3.OperationalError as exc:
                if _locked(exc):
                    conn.close()
                    raise
            except sqlite3.DatabaseError:
                pass
            conn.close()
        log.warning("the search index %s was not usable; rebuilding it", FILE)
        _remove(path)
    raise sqlite3.OperationalError(f"could not make {FILE}")


def _connect_or_none(path: Path) -> sqlite3.Connection | None:
    try:
        return _connect(path)
    except sqlite3.OperationalError as exc:
        if _locked(exc):
            raise
        return None
    except sqlite3.DatabaseError:  # "file is not a database", raised by the first pragma
        return None


def _locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_damage(exc: sqlite3.Error) -> bool:
    """A failure that starting the file again repairs (not a lock another process holds)."""
    return isinstance(exc, sqlite3.DatabaseError) and not _locked(exc)


def reset_search_file(root: Path) -> None:
    """Delete the file (it was found damaged while in use); the next open makes it again."""
    _remove(search_file(root))
