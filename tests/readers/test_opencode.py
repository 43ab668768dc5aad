"""The OpenCode reader: both stores (opencode.db and the older JSON files), messy records,
read-only access with a live WAL writer, the expected rows written by hand from the fixture."""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bourdon.readers.base import MAX_JSON_FILE, ReadResult
from bourdon.readers.opencode import OpenCodeReader
from bourdon.testing.readercheck import reader_context
from tests.support.stores import database
from tests.support.stores.database import DatabaseStore, session

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


OPENCODE = DatabaseStore(
    OpenCodeReader,
    make_home,
    database=DATA / "opencode.db",
    instructions=Path(".config") / "opencode" / "AGENTS.md",
    sessions=6,
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_home(tmp_path_factory.mktemp("opencode"))


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return OPENCODE.read(home)


# -- the rows ---------------------------------------------------------------------------------


def test_protocol_and_names() -> None:
    database.check_names(OPENCODE, "opencode", "BOURDON_OPENCODE_STORE")


def test_sessions_newest_first_from_both_stores(result: ReadResult) -> None:
    newest_first = ["ses_v2", "ses_dup", "ses_b", "ses_c", "ses_a", "ses_nodate"]
    database.check_sessions(OPENCODE, result, newest_first)


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
    words = ("SUBAGENT", "STALE", "CUT MID", "ORPHAN", "BACKFILL", "COMPACTED")
    database.check_messy_records_survived(
        result,
        skipped=3,  # Not JSON: ses_garbage.json, a part cut mid-write, a message row of the database.
        partial_tail=0,
        too_large=1,
        problem="prt_zz.json",
        absent=(*words, "broken.py", "README.md", "fail.py"),
    )


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


def test_live_wal_store_is_read_and_left_untouched(tmp_path: Path) -> None:
    want = ("2026-03-09", ["Live session", "still being written"])
    database.check_live_database_read_untouched(OPENCODE, tmp_path, WAL_ROWS, "ses_live", want)


def test_json_store_is_never_written(tmp_path: Path) -> None:
    database.check_json_copy_read_untouched(
        OPENCODE,
        tmp_path,
        "ses_dup",
        ["Old title before migration", "STALE prompt from the JSON copy"],
    )


# -- where the store is -------------------------------------------------------------------------


def test_locations_and_overrides(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    data = home / ".local" / "share"
    moved = [
        reader_context(empty, env={"XDG_DATA_HOME": str(data)}),
        reader_context(empty, env={"BOURDON_OPENCODE_STORE": str(data / "opencode")}),
        reader_context(empty, store=data / "opencode"),
    ]
    database.check_overrides(OPENCODE, home, empty, moved)


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    database.check_commits_into_a_library(OPENCODE, result, tmp_path)


def test_an_edited_instructions_file_changes_the_store_fingerprint(tmp_path: Path) -> None:
    database.check_edited_instructions_change_the_fingerprint(OPENCODE, tmp_path)


def test_instruction_notes_stay_home_for_a_keep_home_audience(result: ReadResult) -> None:
    database.check_notes_stay_home(result)


def test_private_prompt_setting_keeps_prompts_and_notes_home(home: Path) -> None:
    database.check_private_prompts_stay_home(OPENCODE, home)
