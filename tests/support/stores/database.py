"""Checks every reader of a store kept in SQLite beside older JSON files must pass (goose,
OpenCode): messy records survived, a live WAL database and the JSON copy read without a byte
written, the overrides that move the store, the notes of the instructions file kept home.

Each test file describes its fixture store once (``DatabaseStore``) and calls these with its
own cases: the values it expects are written by hand there, not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bourdon.access.homebound import stays_home
from bourdon.formats import yamlio
from bourdon.ingest.fingerprint import store_fingerprint
from bourdon.readers.base import Reader, ReaderContext, ReadResult, store_path
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.walwriter import held_open


@dataclass(frozen=True)
class DatabaseStore:
    """One agent's fixture store under a home: where its parts are, what it holds."""

    reader: Callable[[], Reader]
    make_home: Callable[[Path], Path]  # the fixture store under a fresh home below the folder
    database: Path  # relative to the home
    instructions: Path  # relative to the home: the file read as the one note
    sessions: int  # the sessions the fixture holds

    def read(self, home: Path, **context: Any) -> ReadResult:
        return self.reader().read(reader_context(home, **context))


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    """The one session row with this id."""
    rows: list[dict[str, Any]] = result.manifest["recent_sessions"]
    (row,) = [s for s in rows if s.get("session_id") == sid]
    return row


def check_names(store: DatabaseStore, name: str, store_env: str) -> None:
    reader = store.reader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (name, "code-assistant", store_env)


def check_sessions(store: DatabaseStore, result: ReadResult, newest_first: list[str]) -> None:
    """The sessions, newest first, are these and no others; the agent is named."""
    assert [s["session_id"] for s in result.manifest["recent_sessions"]] == newest_first
    assert result.stats.sessions == store.sessions == len(newest_first)
    name = store.reader().name
    assert result.manifest["agent"] == {"id": name, "type": "code-assistant"}


def check_messy_records_survived(
    result: ReadResult,
    *,
    skipped: int,
    partial_tail: int,
    too_large: int,
    problem: str,
    absent: tuple[str, ...],
) -> None:
    """The read counted what it passed over, named the unreadable file, and none of the words
    of what it had to leave out reached the view."""
    stats = result.stats
    assert (stats.skipped, stats.partial_tail, stats.too_large) == (
        skipped,
        partial_tail,
        too_large,
    )
    assert any(problem in p for p in stats.problems), stats.problems
    text = yamlio.dump(result.manifest).decode()
    assert [word for word in absent if word in text] == []


def check_live_database_read_untouched(
    store: DatabaseStore, parent: Path, rows: tuple[str, ...], sid: str, want: tuple[str, list[str]]
) -> None:
    """A writer holds the database open in WAL mode, uncheckpointed: its rows are read (``want``
    is the session's date and key actions) and no file of the store changes."""
    home = store.make_home(parent)
    with held_open(home / store.database, rows):
        assert (home / f"{store.database}-wal").exists()
        before = snapshot(home)
        result = store.read(home)
        assert snapshot(home) == before
    row = session(result, sid)
    assert (row["date"], row["key_actions"]) == want


def check_json_copy_read_untouched(
    store: DatabaseStore, parent: Path, sid: str, key_actions: list[str]
) -> None:
    """Without the database, the older JSON copy is all there is: read, and left as it was."""
    home = store.make_home(parent)
    (home / store.database).unlink()
    before = snapshot(home)
    result = store.read(home)
    assert snapshot(home) == before
    assert session(result, sid)["key_actions"] == key_actions


def check_overrides(
    store: DatabaseStore, home: Path, empty: Path, moved: list[ReaderContext]
) -> None:
    """On an ``empty`` home: not ready, the fix names the variable, an empty view; on the
    fixture's home: ready; each context in ``moved`` (an override) reads every session."""
    reader = store.reader()
    missing = reader.health(reader_context(empty))
    assert not missing.ok and reader.store_env in (missing.fix or "")
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    assert reader.health(reader_context(home)).ok
    assert moved
    for ctx in moved:
        assert reader.read(ctx).stats.sessions == store.sessions, ctx


def check_commits_into_a_library(store: DatabaseStore, result: ReadResult, parent: Path) -> None:
    name = store.reader().name
    library = Library.init(parent / "lib")
    try:
        library.regenerate(name, result.manifest, reader=name)
        counts = library.read(name).counts()
        assert counts["recent_sessions"] == store.sessions
        assert counts["known_entities"] == len(result.manifest["known_entities"])
    finally:
        library.close()


def check_edited_instructions_change_the_fingerprint(store: DatabaseStore, parent: Path) -> None:
    home = store.make_home(parent)
    reader, ctx = store.reader(), reader_context(home)
    path = store_path(reader, ctx)
    assert path is not None
    before = store_fingerprint(reader, ctx, path)
    assert store_fingerprint(reader, ctx, path) == before
    (home / store.instructions).write_text("Something new.\n", encoding="utf-8")
    assert store_fingerprint(reader, ctx, path) != before


def check_notes_stay_home(result: ReadResult) -> None:
    """The instructions file's one note is kept home for a keep-home audience."""
    (note,) = result.manifest["notes"]
    assert stays_home("notes", note)


def check_private_prompts_stay_home(store: DatabaseStore, home: Path) -> None:
    """With prompts set private: every session and note is private; entities keep their own."""
    result = store.read(home, prompt_visibility="private")
    rows = [*result.manifest["recent_sessions"], *result.manifest["notes"]]
    assert rows and {r["visibility"] for r in rows} == {"private"}
    assert {e["visibility"] for e in result.manifest["known_entities"]} == {"team", "private"}
