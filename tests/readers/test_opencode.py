"""The OpenCode reader: both stores (opencode.db and the older JSON files), messy records,
read-only access with a live WAL writer, the expected rows written by hand from the fixture."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.homebound import stays_home
from bourdon.formats import yamlio
from bourdon.ingest.fingerprint import store_fingerprint
from bourdon.readers.base import MAX_JSON_FILE, Reader, ReadResult, store_path
from bourdon.readers.opencode import OpenCodeReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.walwriter import held_open

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "stores" / "opencode"
DATA = Path(".local") / "share" / "opencode"
STORAGE = DATA / "storage"
NOTE_TIME = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()


def make_home(parent: Path) -> Path:
    """The fixture store under a fresh home: JSON files copied, opencode.db built from SQL."""
    home = parent / "home"
    shutil.copytree(FIXTURE / "home", home)
    conn = sqlite3.connect(home / DATA / "opencode.db")
    try:
        conn.executescript((FIXTURE / "opencode.sql").read_text(encoding="utf-8"))
    finally:
        conn.close()
    # An unreadable part (a folder where a file should be) and one too large to parse.
    (home / STORAGE / "part" / "msg_a1" / "prt_zz.json").mkdir()
    with open(home / STORAGE / "part" / "msg_a3" / "prt_huge.json", "wb") as handle:
        handle.truncate(MAX_JSON_FILE + 1)  # sparse: costs no disk
    agents = home / ".config" / "opencode" / "AGENTS.md"
    os.utime(agents, (NOTE_TIME, NOTE_TIME))
    return home


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = result.manifest["recent_sessions"]
    (row,) = [s for s in rows if s.get("session_id") == sid]
    return row


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_home(tmp_path_factory.mktemp("opencode"))


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return OpenCodeReader().read(reader_context(home))


# -- the rows ---------------------------------------------------------------------------------


def test_protocol_and_names() -> None:
    reader = OpenCodeReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "opencode",
        "code-assistant",
        "BOURDON_OPENCODE_STORE",
    )


def test_sessions_newest_first_from_both_stores(result: ReadResult) -> None:
    ids = [s["session_id"] for s in result.manifest["recent_sessions"]]
    assert ids == ["ses_v2", "ses_dup", "ses_b", "ses_c", "ses_a", "ses_nodate"]
    assert result.stats.sessions == 6
    assert result.manifest["agent"] == {"id": "opencode", "type": "code-assistant"}


def test_json_session(result: ReadResult) -> None:
    assert session(result, "ses_a") == {
        "date": "2026-03-02",
        "session_id": "ses_a",
        "cwd": "/home/dana/src/ledgerline",
        "project_focus": ["ledgerline", "Add CSV export"],
        # Synthetic text parts are not the user's words; invalid UTF-8 is replaced.
        "key_actions": [
            "Add CSV export",
            "add a CSV export command",
            "Marco wants the caf\ufffd totals too",
        ],
        # The edit, the write and the patch part; not the failed write nor the read.
        "files_touched": ["ledgerline/export.py", "tests/test_export.py"],
        "visibility": "team",
    }


def test_database_session_wins_over_its_json_copy(result: ReadResult) -> None:
    assert session(result, "ses_dup") == {
        "date": "2026-03-08",
        "session_id": "ses_dup",
        "cwd": "/home/dana/src/ledgerline",
        "project_focus": ["ledgerline", "Fix rounding in totals"],
        "key_actions": ["Fix rounding in totals", "fix the rounding of totals"],
        "files_touched": ["ledgerline/totals.py"],  # apply_patch's metadata and patch text
        "visibility": "team",
    }


def test_v2_session_messages(result: ReadResult) -> None:
    assert session(result, "ses_v2") == {
        "date": "2026-03-09",
        "session_id": "ses_v2",
        "cwd": "/home/dana/src/ledgerline",
        "project_focus": ["ledgerline", "Speed up the importer"],
        "key_actions": ["Speed up the importer", "profile the importer and speed it up"],
        "files_touched": ["ledgerline/importer.py"],  # not the write that failed
        "visibility": "team",
    }


def test_windows_folder_and_the_users_time_zone(result: ReadResult) -> None:
    row = session(result, "ses_c")
    assert row["date"] == "2026-03-05"  # 23:30 UTC on 4 March is 00:30 in Paris
    assert row["cwd"] == "C:\\Users\\dana\\src\\infra"
    assert row["key_actions"] == ["Rename subnets", "rename the subnets to match the new plan"]
    assert row["files_touched"] == ["modules/net/subnets.tf"]  # not the failed edit


def test_private_folder_and_undated_session(result: ReadResult) -> None:
    private = session(result, "ses_b")
    assert private["visibility"] == "private"
    assert private["key_actions"] == ["Sort receipts", "sort the 2025 receipts by month"]
    assert private["files_touched"] == ["receipts/by_month.py"]
    undated = session(result, "ses_nodate")
    assert undated["date"] == ""
    assert undated["key_actions"] == ["Undated notes", "list the open TODOs"]


def test_entities_and_notes(result: ReadResult) -> None:
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert set(entities) == {"infra", "ledgerline", "taxes"}
    assert entities["taxes"]["visibility"] == "private"
    assert entities["ledgerline"]["visibility"] == "team"
    assert entities["ledgerline"]["last_touched"] == "2026-03-09"
    assert result.manifest["notes"] == [
        {
            "date": "2026-03-01",
            "text": "OpenCode instructions:\nUse pytest, never unittest.\nKeep functions short.",
            "tags": ["opencode-instructions"],
            "visibility": "team",
        }
    ]


def test_messy_records_are_survived(result: ReadResult) -> None:
    stats = result.stats
    # Not JSON: ses_garbage.json, a part cut mid-write, a message row of the database.
    assert stats.skipped == 3
    assert stats.too_large == 1
    assert any("prt_zz.json" in p for p in stats.problems)
    text = yamlio.dump(result.manifest).decode()
    words = ("SUBAGENT", "STALE", "CUT MID", "ORPHAN", "BACKFILL", "COMPACTED")
    for absent in (*words, "broken.py", "README.md", "fail.py"):
        assert absent not in text


# -- the store is never written ---------------------------------------------------------------


WAL_ROWS = (
    "INSERT INTO session (id, project_id, slug, directory, title, version, time_created,"
    " time_updated) VALUES ('ses_live', 'p1', 'live', '/home/dana/src/ledgerline',"
    " 'Live session', '1.2.3', 1773054000000, 1773054000000)",
    "INSERT INTO message VALUES ('msg_l1', 'ses_live', 1773054000000, 1773054000000,"
    ' \'{"role": "user", "time": {"created": 1773054000000}}\')',
    "INSERT INTO part VALUES ('prt_l1', 'msg_l1', 'ses_live', 1773054000000, 1773054000000,"
    ' \'{"type": "text", "text": "still being written"}\')',
)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Path]:
    """The fixture store with a writer holding opencode.db open in WAL mode, uncheckpointed."""
    home = make_home(tmp_path)
    with held_open(home / DATA / "opencode.db", WAL_ROWS):
        yield home


def test_live_wal_store_is_read_and_left_untouched(live: Path) -> None:
    assert (live / DATA / "opencode.db-wal").exists()
    before = snapshot(live)
    result = OpenCodeReader().read(reader_context(live))
    assert snapshot(live) == before
    row = session(result, "ses_live")
    assert (row["date"], row["key_actions"]) == (
        "2026-03-09",
        ["Live session", "still being written"],
    )


def test_json_store_is_never_written(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / DATA / "opencode.db").unlink()
    before = snapshot(home)
    result = OpenCodeReader().read(reader_context(home))
    assert snapshot(home) == before
    assert session(result, "ses_dup")["key_actions"] == [
        "Old title before migration",
        "STALE prompt from the JSON copy",
    ]  # without the database, the JSON copy is all there is


# -- where the store is -------------------------------------------------------------------------


def test_locations_and_overrides(home: Path, tmp_path: Path) -> None:
    reader = OpenCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = reader.health(reader_context(empty))
    assert not missing.ok and "BOURDON_OPENCODE_STORE" in (missing.fix or "")
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    assert reader.health(reader_context(home)).ok
    data = home / ".local" / "share"
    moved = reader_context(empty, env={"XDG_DATA_HOME": str(data)})
    assert reader.read(moved).stats.sessions == 6
    named = reader_context(empty, env={"BOURDON_OPENCODE_STORE": str(data / "opencode")})
    assert reader.read(named).stats.sessions == 6
    assert reader.read(reader_context(empty, store=data / "opencode")).stats.sessions == 6


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("opencode", result.manifest, reader="opencode")
        counts = library.read("opencode").counts()
        assert counts["recent_sessions"] == 6
        assert counts["known_entities"] == len(result.manifest["known_entities"])
    finally:
        library.close()


def test_an_edited_instructions_file_changes_the_store_fingerprint(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    reader, ctx = OpenCodeReader(), reader_context(home)
    store = store_path(reader, ctx)
    assert store is not None
    before = store_fingerprint(reader, ctx, store)
    assert store_fingerprint(reader, ctx, store) == before
    (home / ".config" / "opencode" / "AGENTS.md").write_text("Something new.\n", encoding="utf-8")
    assert store_fingerprint(reader, ctx, store) != before


def test_instruction_notes_stay_home_for_a_keep_home_audience(result: ReadResult) -> None:
    (note,) = result.manifest["notes"]
    assert stays_home("notes", note)


def test_private_prompt_setting_keeps_prompts_and_notes_home(home: Path) -> None:
    result = OpenCodeReader().read(reader_context(home, prompt_visibility="private"))
    rows = [*result.manifest["recent_sessions"], *result.manifest["notes"]]
    assert rows and {r["visibility"] for r in rows} == {"private"}
    assert {e["visibility"] for e in result.manifest["known_entities"]} == {"team", "private"}
