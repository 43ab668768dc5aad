"""The Qwen Code reader: JSONL chat records per project, the active branch, QWEN.md memory.

Expectations written by hand from the fixture store (tests/fixtures/stores/qwen-code/) and the
format facts in the reader's docstring, before the reader was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import base
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.qwen_code import QwenCodeReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install

LEDGERLINE = "4a1c7e2b-0d3f-4b8e-9a61-2f5d8c3e7a10"
HARBOR = "7d2e9f41-5c6b-4a3d-8e1f-0b9a2c4d6e83"
NOTES = "0c5f3a9e-8b21-4d7c-a6e4-3f1b7d9c2e55"
INFRA = "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b"


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    (row,) = [s for s in result.manifest["recent_sessions"] if s.get("session_id") == sid]
    return row


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install("qwen-code", tmp_path_factory.mktemp("qwen") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return QwenCodeReader().read(reader_context(home))


def test_the_reader_protocol() -> None:
    reader = QwenCodeReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "qwen-code",
        "code-assistant",
        "BOURDON_QWEN_CODE_STORE",
    )


def test_one_session_per_chat_file(result: ReadResult) -> None:
    ids = [s["session_id"] for s in result.manifest["recent_sessions"]]
    assert ids == [INFRA, NOTES, HARBOR, LEDGERLINE]  # the empty file is none
    assert result.stats.sessions == 4


def test_the_active_branch_of_a_session(home: Path, result: ReadResult) -> None:
    report = session(result, LEDGERLINE)
    assert report["date"] == "2026-04-15"  # 22:30 UTC is 00:30 the next day in Paris
    assert report["cwd"] == f"{home}/src/ledgerline"  # from the records, not the folder name
    assert report["project_focus"] == ["ledgerline", "Monthly report"]
    # The title, then the user's prompts on the branch the user kept: the rewound prompt,
    # the slash command, the notification and the subagent's prompt are not the user's.
    assert report["key_actions"] == [
        "Monthly report",
        "add a monthly report command",
        "also export the report as CSV",
        "keep the CSV columns stable",
    ]
    # Successful edits on the branch, then the subagent's; the failed edit and the
    # rewound write are not files touched.
    assert report["files_touched"] == [
        "ledgerline/report.py",
        "ledgerline/report_csv.py",
        "ledgerline/report_columns.py",
    ]
    everything = yamlio.dump(result.manifest).decode()
    for absent in ("UNDONE", "FAILED", "SUBAGENT", "NOTIFICATION", "/stats", "CUT MID-WRITE"):
        assert absent not in everything, absent
    assert "CANARY-qwen-oauth" not in everything


def test_messy_records_are_survived(home: Path, result: ReadResult) -> None:
    assert result.stats.skipped == 1  # "not json at all"
    assert result.stats.partial_tail == 1  # the last record, cut mid-write
    harbor = session(result, HARBOR)
    assert harbor["date"] == "2026-04-16" and harbor["cwd"] == f"{home}/src/harbor"
    # Invalid UTF-8 replaced; a message of the wrong type; a record without a timestamp.
    assert harbor["key_actions"] == [
        "switch the monorepo to pnpm café \ufffd workspaces",
        "and drop the yarn lockfile",
    ]
    assert harbor["files_touched"] == ["pnpm-workspace.yaml"]


def test_archived_windows_and_private_sessions(home: Path, result: ReadResult) -> None:
    notes = session(result, NOTES)  # chats/archive/ is still the user's history
    assert notes["date"] == "2026-04-20"  # 08:00 at +05:30
    assert notes["cwd"] == f"{home}/private/notes" and notes["visibility"] == "private"
    infra = session(result, INFRA)
    assert infra["cwd"] == "C:\\Users\\dana\\src\\infra-terraform"
    assert infra["files_touched"] == ["modules/net/nat.tf"]
    assert infra["project_focus"] == ["infra-terraform"]


def test_memories_become_notes(result: ReadResult) -> None:
    notes = {n["text"]: n for n in result.manifest["notes"]}
    assert set(notes) == {
        "Priya owns the importers.",
        "The team uses pnpm, not npm.",
        "QWEN.md:\n# Preferences\n\nWrite British English in docs.",
        "QWEN.md for ledgerline:\nRun `make test` before pushing.",
        "Qwen memory report-format (How reports are laid out) for ledgerline:\n"
        "Reports are monthly, one CSV per account.",
    }
    assert notes["Priya owns the importers."]["tags"] == ["qwen-memory"]
    assert notes["QWEN.md:\n# Preferences\n\nWrite British English in docs."]["tags"] == [
        "qwen-context"
    ]
    assert notes["QWEN.md for ledgerline:\nRun `make test` before pushing."][
        "related_entities"
    ] == ["ledgerline"]
    assert {n["date"] for n in notes.values()} == {"2026-04-01"}


def test_an_unreadable_chat_and_an_empty_store(home: Path, tmp_path: Path) -> None:
    reader = QwenCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    store = tmp_path / "store"
    chats = store / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    (chats / "gone.jsonl").symlink_to(tmp_path / "gone.jsonl")
    (chats / "ok.jsonl").write_text(
        '{"uuid":"a","parentUuid":null,"sessionId":"ok","timestamp":"2026-04-01T08:00:00Z",'
        '"type":"user","cwd":"/w/app","message":{"role":"user","parts":[{"text":"hello"}]}}\n'
    )
    got = reader.read(reader_context(empty, store=store))
    assert [s["session_id"] for s in got.manifest["recent_sessions"]] == ["ok"]
    assert got.stats.problems


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    QwenCodeReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("qwen-code", result.manifest, reader="qwen-code")
        counts = library.read("qwen-code").counts()
        assert counts["recent_sessions"] == 4 and counts["notes"] == 5
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path, home: Path) -> None:
    reader = QwenCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert reader.locations(reader_context(empty)) == [empty / ".qwen"]
    moved = reader_context(empty, env={"QWEN_HOME": str(home / ".qwen")})
    assert reader.locations(moved)[0] == home / ".qwen"
    assert reader.read(moved).stats.sessions == 4
    bourdon = reader_context(empty, env={"BOURDON_QWEN_CODE_STORE": str(home / ".qwen")})
    assert reader.health(bourdon).ok and reader.read(bourdon).stats.sessions == 4
    # QWEN_RUNTIME_DIR moves the chats (projects/) but not QWEN.md.
    runtime = reader_context(home, env={"QWEN_RUNTIME_DIR": str(tmp_path / "runtime")})
    moved_chats = reader.read(runtime)
    assert moved_chats.stats.sessions == 0
    assert "Priya owns the importers." in {n["text"] for n in moved_chats.manifest["notes"]}


def test_a_huge_record_is_skipped_with_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_LINE", 400)  # as if the pasted log were 16 MB
    chats = tmp_path / ".qwen" / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    head = '{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2026-04-01T08:00:00Z",'
    lines = [
        head + '"type":"user","cwd":"/w/app","message":{"parts":[{"text":"fix the parser"}]}}',
        head.replace('"a"', '"b"').replace("null", '"a"')
        + '"type":"user","cwd":"/w/app","message":{"parts":[{"text":"'
        + "x" * 500
        + '"}]}}',
    ]
    (chats / "s.jsonl").write_text("\n".join(lines) + "\n")
    got = QwenCodeReader().read(reader_context(tmp_path))
    assert got.stats.too_large == 1
    assert [s["key_actions"] for s in got.manifest["recent_sessions"]] == [["fix the parser"]]
