"""The Gemini CLI reader: both session formats, both project id schemes, memory files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bourdon.formats import yamlio
from bourdon.readers import load_readers
from bourdon.readers.base import Reader, ReadResult, ReadStats
from bourdon.readers.gemini_cli import GeminiCliReader, replay
from bourdon.store.library import Library
from bourdon.testing.readercheck import (
    check_golden,
    golden_text,
    reader_context,
    sessions_by,
    snapshot,
)
from tests.support.stores import gemini_cli as store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "gemini-cli.yaml"


# -- the store, read once -------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gemini") / "home"
    store.write_store(root)
    return root


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return GeminiCliReader().read(reader_context(home))


# -- the recording format -----------------------------------------------------------------------


def test_replay_follows_gemini_cli(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    lines = [
        {"sessionId": "s1", "projectHash": "h", "startTime": "2026-06-01T08:00:00Z"},
        {"id": "a", "type": "user", "content": "one"},
        {"id": "b", "type": "gemini", "content": "reply"},
        {"id": "c", "type": "user", "content": "two"},
        {"$rewindTo": "b"},  # removes b and c
        {"id": "a", "type": "user", "content": "one, edited"},  # replaces a in place
        {"id": "d", "type": "user", "content": "three"},
        {"$set": {"summary": "S", "lastUpdated": "2026-06-01T09:00:00Z"}},
        {"$unknown": 1},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    stats = ReadStats()
    rec = replay(path, stats)
    assert rec is not None
    assert [m["content"] for m in rec.messages] == ["one, edited", "three"]
    assert rec.meta["summary"] == "S" and rec.meta["sessionId"] == "s1"
    assert stats.skipped == 1
    path.write_text("\n".join(json.dumps(x) for x in [*lines[:4], {"$rewindTo": "zz"}]) + "\n")
    rec = replay(path, ReadStats())
    assert rec is not None and rec.messages == []  # an unknown target clears everything
    path.write_text(
        json.dumps({"sessionId": "s2", "projectHash": "h", "messages": [{"id": "x"}]}, indent=2)
    )
    rec = replay(path, ReadStats())  # a whole-file record under a .jsonl name
    assert rec is not None and rec.meta["sessionId"] == "s2" and len(rec.messages) == 1


# -- the store ----------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    readers, _ = load_readers()
    reader = readers["gemini-cli"]
    assert isinstance(reader, Reader) and isinstance(reader, GeminiCliReader)
    assert (reader.agent_type, reader.store_env) == ("code-assistant", "BOURDON_GEMINI_CLI_STORE")


def test_golden_manifest(home: Path, result: ReadResult) -> None:
    check_golden(GOLDEN, golden_text(result, home))


def test_messy_recordings_are_survived(result: ReadResult) -> None:
    stats = result.stats
    assert stats.partial_tail == 1
    assert stats.skipped == 2  # the unknown "$future" record, the cut legacy file
    assert any("cafebabe" in p for p in stats.problems)
    everything = yamlio.dump(result.manifest).decode()
    for gone in (
        "UNDONE",
        "FORGOTTEN",
        "SUBAGENT PROMPT",
        "DECOY",
        "CHECKPOINT",
        "FAILED",
        "/memory",
        "/quit",
    ):
        assert gone not in everything, gone
    (report,) = sessions_by(result, "Monthly report")
    assert report["date"] == "2026-06-26"  # 22:10 UTC is 00:10 the next day in Paris
    assert report["key_actions"] == [
        "Monthly report",
        "add a monthly report command",
        "also export the report as CSV",
        "compressed: keep the CSV columns stable",
    ]
    # The repeated id kept its place; the subagent's edit counts for the parent, last.
    assert report["files_touched"] == [
        "ledgerline/report.py",
        "ledgerline/report_csv.py",
        "ledgerline/report_columns.py",
    ]
    assert sessions_by(result, "rename the money module to amounts")[0]["files_touched"] == [
        "ledgerline/amounts.py"
    ]
    # The resumed legacy session and its .jsonl are one session.
    (resumed,) = sessions_by(result, "Report options")
    assert resumed["key_actions"][1:] == [
        "add a --since option to the report",
        "and an --until option",
    ]
    # Invalid UTF-8 replaced; +05:30 start; a message without a timestamp.
    (subnets,) = sessions_by(result, "Subnets")
    assert "\ufffd" in subnets["key_actions"][1] and subnets["date"] == "2026-06-29"
    assert subnets["files_touched"] == ["modules/net/main.tf"]


def test_projects_by_hash_slug_and_registry(result: ReadResult, home: Path) -> None:
    rows = result.manifest["recent_sessions"]
    docs = [s for s in rows if s.get("cwd") == str(home / "src" / "docs-site")]
    assert len(docs) == 3  # two in the sha256 folder, one in the slug folder
    windows = [s for s in rows if s.get("cwd") == "c:\\users\\dana\\src\\infra-terraform"]
    assert len(windows) == 3 and windows[0]["project_focus"][0] == "infra-terraform"
    (lost,) = sessions_by(result, "what does this old script do?")
    assert "cwd" not in lost and "project_focus" not in lost  # nothing resolves that hash
    (logged,) = sessions_by(result, "summarise yesterday's import failures")
    assert logged["date"] == "2026-05-31" and logged["cwd"].endswith("/src/ledgerline")
    assert result.stats.sessions == len(rows) == 17


def test_memories_become_notes(result: ReadResult) -> None:
    notes = {n["text"]: n for n in result.manifest["notes"]}
    for bullet in (
        "Priya owns the importers.",
        "The team uses pnpm, not npm.",
        "Dana prefers pytest over unittest.",
    ):
        assert (
            notes[bullet]["tags"] == ["gemini-memory"] and "related_entities" not in notes[bullet]
        )
    assert notes["Statements arrive as CSV from two banks."]["related_entities"] == ["ledgerline"]
    assert "Run `make test` before pushing. It takes about a minute." in notes
    context_note = next(t for t in notes if t.startswith("GEMINI.md:\n"))
    assert "British English" in context_note and "Gemini Added Memories" not in context_note
    assert {n["date"] for n in notes.values()} == {"2026-05-30"}


def test_visibility_and_secrets(result: ReadResult) -> None:
    for row in result.manifest["recent_sessions"]:
        assert row["visibility"] == ("private" if "/personal/" in row.get("cwd", "") else "team")
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert entities["notes"]["visibility"] == "private"
    assert store.OAUTH_TOKEN not in yamlio.dump(result.manifest).decode()


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    GeminiCliReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("gemini-cli", result.manifest, reader="gemini-cli")
        counts = library.read("gemini-cli").counts()
        assert counts["recent_sessions"] == len(result.manifest["recent_sessions"])
        assert counts["notes"] == len(result.manifest["notes"])
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path) -> None:
    reader = GeminiCliReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    other = tmp_path / "profile"
    store.write_store(other, sessions=2)
    assert (
        reader.read(reader_context(empty, env={"GEMINI_CLI_HOME": str(other)})).stats.sessions > 0
    )
    env = {"BOURDON_GEMINI_CLI_STORE": str(other / ".gemini")}
    assert reader.health(reader_context(empty, env=env)).ok
