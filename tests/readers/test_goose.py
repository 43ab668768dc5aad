"""The goose reader: sessions.db and the older JSONL session files, hints files as notes,
messy records, read-only access with a live WAL writer; expected rows written by hand."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bourdon.readers.base import ReadResult
from bourdon.readers.goose import GooseReader
from bourdon.testing.readercheck import reader_context
from tests.support.stores import database
from tests.support.stores.database import DatabaseStore, session

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "stores" / "goose"
SESSIONS = Path(".local") / "share" / "goose" / "sessions"
NOTE_TIME = datetime(2026, 3, 1, 12, 0, tzinfo=UTC).timestamp()


def make_home(parent: Path) -> Path:
    """The fixture store under a fresh home: JSONL files copied, sessions.db built from SQL."""
    home = parent / "home"
    shutil.copytree(FIXTURE / "home", home)
    conn = sqlite3.connect(home / SESSIONS / "sessions.db")
    try:
        conn.executescript((FIXTURE / "goose.sql").read_text(encoding="utf-8"))
    finally:
        conn.close()
    (home / SESSIONS / "unreadable.jsonl").mkdir()  # a folder where a session file should be
    hints = home / ".config" / "goose" / ".goosehints"
    os.utime(hints, (NOTE_TIME, NOTE_TIME))
    return home


GOOSE = DatabaseStore(
    GooseReader,
    make_home,
    database=SESSIONS / "sessions.db",
    instructions=Path(".config") / "goose" / ".goosehints",
    sessions=6,
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_home(tmp_path_factory.mktemp("goose"))


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return GOOSE.read(home)


# -- the rows ---------------------------------------------------------------------------------


def test_protocol_and_names() -> None:
    database.check_names(GOOSE, "goose", "BOURDON_GOOSE_STORE")


def test_sessions_newest_first_from_both_stores(result: ReadResult) -> None:
    database.check_sessions(
        GOOSE,
        result,
        [
            "20260309_1",
            "20260308_090000",
            "20260306_1",
            "20260306_140000",
            "20260304_233000",
            "20260302_101500",
        ],  # not the sub_agent nor the hidden session
    )


def test_database_session(result: ReadResult) -> None:
    assert session(result, "20260308_090000") == {
        "date": "2026-03-08",
        "session_id": "20260308_090000",
        "cwd": "/home/dana/src/ledgerline",
        "project_focus": ["ledgerline", "Payee matching"],
        # Not the text only the agent sees; a millisecond timestamp read as such.
        "key_actions": ["Payee matching", "match payees with rapidfuzz", "use a cutoff of 85"],
        "files_touched": ["ledgerline/payees.py"],  # the write that failed (isError) is not
        "visibility": "team",
    }


def test_legacy_jsonl_session(result: ReadResult) -> None:
    assert session(result, "20260302_101500") == {
        "date": "2026-03-02",
        "session_id": "20260302_101500",
        "cwd": "/home/dana/src/harbor",
        "project_focus": ["harbor", "Harbor docs"],
        "key_actions": ["Harbor docs", "write the harbor README", "also add a quick start section"],
        "files_touched": ["README.md"],  # not the view, not the str_replace that failed
        "visibility": "team",
    }


def test_time_zones_titles_and_folders(result: ReadResult) -> None:
    journal = session(result, "20260309_1")
    assert journal["date"] == "2026-03-10"  # 23:30 UTC on 9 March is 00:30 in Paris
    assert journal["visibility"] == "private"
    assert journal["files_touched"] == ["index.md"]
    subnets = session(result, "20260306_1")  # schema before v4: the description is the title
    assert subnets["key_actions"] == ["Subnet rename", "rename the subnets"]
    assert subnets["cwd"] == "C:\\Users\\dana\\src\\infra"
    assert subnets["files_touched"] == ["modules/net/subnets.tf"]
    bare = session(result, "20260304_233000")  # no metadata line: no folder, still a session
    assert bare == {
        "date": "2026-03-05",
        "session_id": "20260304_233000",
        "key_actions": ["hello goose"],
        "visibility": "team",
    }
    cafe = session(result, "20260306_140000")
    assert cafe["key_actions"] == ["Caf\ufffd menu", "price the caf\ufffd menu"]
    assert cafe["date"] == "2026-03-06"


def test_entities_and_notes(result: ReadResult) -> None:
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert set(entities) == {"harbor", "infra", "journal", "ledgerline"}
    assert entities["journal"]["visibility"] == "private"
    assert entities["harbor"]["visibility"] == "team"
    assert result.manifest["notes"] == [
        {
            "date": "2026-03-01",
            "text": "Goose hints:\nAlways run cargo fmt before committing.",
            "tags": ["goose-hints"],
            "visibility": "team",
        }
    ]


def test_messy_records_are_survived(result: ReadResult) -> None:
    database.check_messy_records_survived(
        result,
        # A line cut inside a record, garbage.jsonl's two lines, a content_json that is not JSON.
        skipped=4,
        partial_tail=1,  # the torn last line of the harbor session
        too_large=0,
        problem="unreadable.jsonl",
        absent=("STALE", "HIDDEN", "SUBAGENT", "PARTIAL", "guide.md", "intro.md", "match.py"),
    )


def test_project_hints_of_a_folder_present_here(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "work" / "kiln"
    project.mkdir(parents=True)
    (project / ".goosehints").write_text("Run make check first.\n", encoding="utf-8")
    os.utime(project / ".goosehints", (NOTE_TIME, NOTE_TIME))
    meta = {"working_dir": str(project), "description": "Kiln", "message_count": 1}
    prompt = {"role": "user", "created": 1772442000, "content": [{"type": "text", "text": "hi"}]}
    sessions = home / SESSIONS
    sessions.mkdir(parents=True)
    (sessions / "20260302_1.jsonl").write_text(
        json.dumps(meta) + "\n" + json.dumps(prompt) + "\n", encoding="utf-8"
    )
    result = GOOSE.read(home)
    assert result.manifest["notes"] == [
        {
            "date": "2026-03-01",
            "text": "Goose hints for kiln:\nRun make check first.",
            "related_entities": ["kiln"],
            "tags": ["goose-hints"],
            "visibility": "team",
        }
    ]


# -- the store is never written ---------------------------------------------------------------


LIVE_ROWS = (
    "INSERT INTO sessions (id, name, working_dir, created_at)"
    " VALUES ('20260309_9', 'Live session', '/home/dana/src/ledgerline', '2026-03-09 11:00:00')",
    "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES"
    ' (\'20260309_9\', \'user\', \'[{"type": "text", "text": "still being written"}]\','
    " 1773054000)",
)


def test_live_wal_store_is_read_and_left_untouched(tmp_path: Path) -> None:
    database.check_live_database_read_untouched(
        GOOSE,
        tmp_path,
        LIVE_ROWS,
        "20260309_9",
        ("2026-03-09", ["Live session", "still being written"]),
    )


def test_jsonl_store_is_never_written(tmp_path: Path) -> None:
    database.check_json_copy_read_untouched(
        GOOSE, tmp_path, "20260308_090000", ["Old legacy copy", "STALE legacy prompt"]
    )


# -- where the store is -------------------------------------------------------------------------


def test_locations_and_overrides(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    data = home / ".local" / "share"
    root = tmp_path / "root"
    shutil.copytree(data / "goose", root / "data")
    moved = [
        reader_context(empty, env={"XDG_DATA_HOME": str(data)}),
        reader_context(empty, env={"GOOSE_PATH_ROOT": str(root)}),
        reader_context(empty, env={"BOURDON_GOOSE_STORE": str(data / "goose" / "sessions")}),
        reader_context(empty, store=data / "goose"),
    ]
    database.check_overrides(GOOSE, home, empty, moved)
    windows = GooseReader().locations(
        reader_context(empty, env={"APPDATA": "C:/Users/dana/AppData"})
    )
    assert Path("C:/Users/dana/AppData") / "Block" / "goose" / "data" / "sessions" in windows


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    database.check_commits_into_a_library(GOOSE, result, tmp_path)


def test_an_edited_instructions_file_changes_the_store_fingerprint(tmp_path: Path) -> None:
    database.check_edited_instructions_change_the_fingerprint(GOOSE, tmp_path)


def test_hints_notes_stay_home_for_a_keep_home_audience(result: ReadResult) -> None:
    database.check_notes_stay_home(result)


def test_private_prompt_setting_keeps_prompts_and_notes_home(home: Path) -> None:
    database.check_private_prompts_stay_home(GOOSE, home)
