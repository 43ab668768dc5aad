"""The Cline reader: golden manifest, messy task files; Roo Code and Kilo Code tasks are not its."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import base, load_readers
from bourdon.readers.base import Reader, ReadResult, ReadStats
from bourdon.readers.cline import DIALECT, ClineReader
from bourdon.readers.common.clinetasks import task_draft
from bourdon.readers.kilo_code import KiloCodeReader
from bourdon.readers.roo_code import RooCodeReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import check_golden, golden_text, reader_context, snapshot
from tests.support.stores import cline as store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "cline.yaml"


# -- the store, read once -------------------------------------------------------------------


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = result.manifest["recent_sessions"]
    (row,) = [s for s in rows if s.get("session_id") == sid]
    return row


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cline") / "home"
    store.write_store(root)
    return root


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return ClineReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    readers, _ = load_readers()
    reader = readers["cline"]
    assert isinstance(reader, Reader) and isinstance(reader, ClineReader)
    assert (reader.agent_type, reader.store_env) == ("code-assistant", "BOURDON_CLINE_STORE")


def test_golden_manifest(home: Path, result: ReadResult) -> None:
    check_golden(GOLDEN, golden_text(result, home))


def test_only_clines_own_tasks(home: Path, result: ReadResult) -> None:
    # The store holds Cline's, Roo Code's and Kilo Code's folders: Roo's and Kilo's tasks are
    # now their own readers' sessions (before, this reader read all three, tagged by fork).
    tags = {t for s in result.manifest["recent_sessions"] for t in s.get("tags", [])}
    assert tags == {"cline"}
    assert result.stats.sessions == len(result.manifest["recent_sessions"]) == 11
    roo = RooCodeReader().read(reader_context(home)).manifest["recent_sessions"]
    kilo = KiloCodeReader().read(reader_context(home)).manifest["recent_sessions"]
    assert len(roo) == len(kilo) == 2  # 15 sessions in all, as the combined reader found
    assert all(s["cwd"].endswith("/src/harbor") for s in roo)  # history_item.workspace
    assert all(s["cwd"].endswith("/private/health") for s in kilo)
    mine = {s["session_id"] for s in result.manifest["recent_sessions"]}
    assert mine.isdisjoint(s["session_id"] for s in roo + kilo)


def test_messy_tasks_are_survived(result: ReadResult) -> None:
    stats = result.stats
    assert stats.skipped == 3  # a tool text that is not JSON, two files cut mid-write
    assert len([p for p in stats.problems if "not valid JSON" in p]) == 2
    # Resumed task: partial fragments ignored, feedback after resume_task kept, invalid UTF-8
    # replaced, a message without ts, 23:15 UTC is 00:15 the next day in Paris.
    report = session(result, "1773184500000")
    assert report["date"] == "2026-03-11"
    assert report["key_actions"][0] == "Add a monthly report command"
    assert report["key_actions"][1].startswith("Marco wants the café \ufffd report")
    assert report["files_touched"] == ["ledgerline/report.py", "ledgerline/cli.py"]
    everything = yamlio.dump(result.manifest).decode()
    assert "PARTIAL" not in everything
    # ui_messages.json cut: the prompt comes from the API history's <task>, files from both.
    cut = session(result, "1773306000000")
    assert cut["key_actions"] == ["Move eslint config into packages/config"]
    assert cut["files_touched"] == ["packages/config/eslint.js"]
    # task_metadata.json cut (BOM, CRLF): the XML-era history still gives the edit.
    assert session(result, "1773392400000")["files_touched"] == [".changeset/config.md"]
    # Legacy claude_messages.json, no history entry: cwd from environment_details.
    legacy = session(result, "1756735200000")
    assert legacy["cwd"].endswith("/src/ledgerline") and legacy["date"] == "2025-09-01"
    # In the history, folder gone: still a session, from what the history says.
    gone = session(result, "1767225600000")
    assert (
        gone["key_actions"] == ["Plan the 2026 roadmap for ledgerline"]
        and gone["date"] == "2026-01-01"
    )


def test_windows_paths_and_visibility(result: ReadResult) -> None:
    windows = [
        s
        for s in result.manifest["recent_sessions"]
        if s.get("cwd") == "C:\\Users\\dana\\src\\infra-terraform"
    ]
    assert windows and all(s["files_touched"] == ["modules/net/nat.tf"] for s in windows)
    for row in result.manifest["recent_sessions"]:
        assert row["visibility"] == "team"  # the private project's tasks are Kilo Code's
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert "health" not in entities
    assert entities["infra-terraform/modules/net/nat.tf"]["type"] == "file"


def test_rules_become_notes_and_secrets_stay_out(result: ReadResult) -> None:
    texts = [n["text"] for n in result.manifest["notes"]]
    assert any(t.startswith("Cline rule testing (Tests) for ledgerline:") for t in texts)
    assert any("Use pnpm, never npm or yarn." in t for t in texts)
    assert any(t.startswith("Cline rule style:") for t in texts)
    assert not any("exit 0" in t for t in texts)  # .clinerules/hooks are not rules
    assert store.API_KEY not in yamlio.dump(result.manifest).decode()


def test_huge_whole_file_json_is_skipped_with_a_count(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_JSON_FILE", 1_000_000)  # the 2 MB ui_messages.json
    result = ClineReader().read(reader_context(home))
    assert result.stats.too_large == 1
    assert any("too large" in p for p in result.stats.problems)
    report = session(result, "1773184500000")  # the rest of the task is still read
    assert report["files_touched"] == ["ledgerline/report.py", "ledgerline/cli.py"]


def test_task_files_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "1"
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_text(
        json.dumps(
            [
                {
                    "role": "user",
                    "content": "<task>\nfix it\n</task>\n# Current Working Directory (/w/my (copy) app) Files\n",
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": "<write_to_file>\n<path>a.py</path>\n<content>x</content>\n</write_to_file>",
                        }
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "name": "apply_diff", "input": {"path": "b.py"}},
                        {"type": "tool_use", "name": "read_file", "input": {"path": "c.py"}},
                    ],
                },
            ]
        )
    )
    draft = task_draft(folder, None, DIALECT, ReadStats())
    assert draft.cwd == "/w/my (copy) app" and draft.prompts == ["fix it"]
    assert draft.files == ["a.py", "b.py"] and draft.tags == ["cline"] and draft.start is None


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    ClineReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("cline", result.manifest, reader="cline")
        counts = library.read("cline").counts()
        assert counts["recent_sessions"] == len(result.manifest["recent_sessions"])
        assert counts["notes"] == len(result.manifest["notes"])
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path, home: Path) -> None:
    reader = ClineReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    places = reader.locations(reader_context(empty))
    assert empty / ".cline" / "data" in places
    storage = empty / ".config" / "Windsurf" / "User" / "globalStorage"
    assert storage / "saoudrizwan.claude-dev" in places
    assert not any("roo-cline" in str(p) or "kilo-code" in str(p) for p in places)
    storage = home / ".config" / "Code" / "User" / "globalStorage"
    only = reader.read(
        reader_context(empty, env={"BOURDON_CLINE_STORE": str(storage / "saoudrizwan.claude-dev")})
    )
    # A folder holding the extension folders: Cline's is read, Roo Code's beside it is not.
    holding = reader.read(reader_context(empty, store=storage))
    assert holding.manifest == only.manifest and holding.stats.sessions > 0
    cli = reader.read(reader_context(empty, env={"CLINE_DIR": str(home / ".cline" / "data")}))
    assert cli.stats.sessions > 0
