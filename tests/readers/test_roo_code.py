"""The Roo Code reader: its own task folders only, Roo's dialect, subtasks, rules, messy files.

Expectations written by hand from the fixture store (tests/fixtures/stores/roo-code/) and the
format facts in the reader's docstring, before the reader was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import base
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.common.jsonc import loads_jsonc
from bourdon.readers.roo_code import RooCodeReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install

TASKS = Path(".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks")


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    (row,) = [s for s in result.manifest["recent_sessions"] if s.get("session_id") == sid]
    return row


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install("roo-code", tmp_path_factory.mktemp("roo") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return RooCodeReader().read(reader_context(home))


def test_the_reader_protocol() -> None:
    reader = RooCodeReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "roo-code",
        "code-assistant",
        "BOURDON_ROO_CODE_STORE",
    )


def test_sessions_of_every_roo_store_and_only_roo(home: Path, result: ReadResult) -> None:
    ids = [s["session_id"] for s in result.manifest["recent_sessions"]]
    # Newest first: the Roo CLI's store, Cursor's, then VS Code's; the empty task, the
    # subtask (folded into its parent) and the index entry whose folder is gone are none.
    assert ids == [
        "1776841200000",
        "1776783600000",
        "1776672000000",
        "1776420000000",
        "1776330000000",
        "1776205800000",
    ]
    assert result.stats.sessions == 6
    assert {t for s in result.manifest["recent_sessions"] for t in s["tags"]} == {"roo-code"}
    everything = yamlio.dump(result.manifest).decode()
    for absent in ("CLINE TASK", "KILO TASK", "DELETED TASK", "SUBTASK PROMPT", "PARTIAL"):
        assert absent not in everything, absent
    assert "CANARY-roo-secret" not in everything


def test_a_task_in_roos_own_dialect(home: Path, result: ReadResult) -> None:
    report = session(result, "1776205800000")
    assert report["date"] == "2026-04-15"  # 22:30 UTC on the 14th is 00:30 in Paris
    assert report["cwd"] == f"{home}/src/ledgerline"
    assert report["project_focus"] == ["ledgerline"]
    # The first say:text is the task; later say:text are the model's words.
    assert report["key_actions"] == ["Add a monthly report command", "Also write the CSV export"]
    # ask:tool edits, Roo's native tools (apply_diff, edit_file's file_path, apply_patch's
    # envelope), roo_edited in task_metadata.json, and the subtask's new test file, last.
    assert report["files_touched"] == [
        "ledgerline/report.py",
        "ledgerline/cli.py",
        "ledgerline/report_csv.py",
        "ledgerline/money.py",
        "tests/test_report.py",
    ]
    assert report["visibility"] == "team"


def test_messy_tasks_are_survived(home: Path, result: ReadResult) -> None:
    # "{not json" in a tool message, history_item.json cut mid-write, a garbage
    # ui_messages.json, two array entries that are not messages.
    assert result.stats.skipped == 5
    # The cut history_item.json: the tasks index still knows the task and its workspace.
    pnpm = session(result, "1776330000000")
    assert pnpm["cwd"] == f"{home}/src/harbor" and pnpm["date"] == "2026-04-16"
    assert pnpm["key_actions"] == ["Switch the monorepo to pnpm workspaces"]
    assert pnpm["files_touched"] == ["pnpm-workspace.yaml"]
    # Garbage ui_messages.json: the older API history (<task>, Current Working Directory).
    tsconfig = session(result, "1776420000000")
    assert tsconfig["cwd"] == f"{home}/src/harbor" and tsconfig["date"] == "2026-04-17"
    assert tsconfig["key_actions"] == ["Share one tsconfig across packages"]
    assert tsconfig["files_touched"] == ["packages/config/tsconfig.base.json"]
    # Wrong types in the history item, a message without ts, a ts that is not a time.
    health = session(result, "1776672000000")
    assert health["date"] == "2026-04-20"
    assert health["key_actions"] == ["Chart my running distance per week", "Use kilometres"]
    assert health["files_touched"] == ["running.py"]


def test_windows_workspaces_the_cli_and_visibility(home: Path, result: ReadResult) -> None:
    nat = session(result, "1776783600000")
    assert nat["cwd"] == "C:\\Users\\dana\\src\\infra-terraform"
    assert nat["files_touched"] == ["modules/net/nat.tf"] and nat["date"] == "2026-04-21"
    cli = session(result, "1776841200000")
    assert cli["key_actions"] == ["Explain the reconcile algorithm"]
    assert cli["cwd"] == f"{home}/src/ledgerline" and cli["date"] == "2026-04-22"
    assert session(result, "1776672000000")["visibility"] == "private"
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert entities["health"]["visibility"] == "private"
    assert entities["ledgerline"]["summary"].startswith("Worked on in 2 sessions")
    assert entities["infra-terraform"]["type"] == "project"


def test_roo_rules_become_notes(result: ReadResult) -> None:
    notes = {n["text"]: n for n in result.manifest["notes"]}
    assert set(notes) == {
        "Roo rule style:\nAnswer briefly.",
        "Roo rule 01-packages (Packages) for harbor:\nUse pnpm, never npm or yarn.",
        "Roo rule tests (code mode) for harbor:\nEvery package gets a vitest test.",
        "Roo rule .roorules for ledgerline:\nAmounts are Decimal, never float.",
    }
    assert {n["date"] for n in notes.values()} == {"2026-04-01"}
    assert notes["Roo rule style:\nAnswer briefly."]["tags"] == ["roo-rule"]
    assert "related_entities" not in notes["Roo rule style:\nAnswer briefly."]
    packages = notes["Roo rule 01-packages (Packages) for harbor:\nUse pnpm, never npm or yarn."]
    assert packages["related_entities"] == ["harbor"]


def test_an_unreadable_file_and_an_empty_store(home: Path, tmp_path: Path) -> None:
    reader = RooCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    # A ui_messages.json that cannot be opened (a folder in its place) and a dangling link.
    broken = tmp_path / "broken"
    task = broken / "tasks" / "1776000000000"
    (task / "ui_messages.json").mkdir(parents=True)
    (task / "api_conversation_history.json").symlink_to(tmp_path / "nowhere.json")
    (task / "history_item.json").write_text(
        '{"id": "1776000000000", "ts": 1776000000000, "task": "still a session"}'
    )
    got = reader.read(reader_context(empty, store=broken))
    assert [s["key_actions"] for s in got.manifest["recent_sessions"]] == [["still a session"]]
    assert got.stats.problems


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    RooCodeReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("roo-code", result.manifest, reader="roo-code")
        counts = library.read("roo-code").counts()
        assert counts["recent_sessions"] == 6 and counts["notes"] == 4
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path, home: Path) -> None:
    reader = RooCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    places = reader.locations(reader_context(empty))
    assert empty / TASKS.parent in places
    assert empty / ".vscode-mock" / "global-storage" in places
    assert (
        empty / ".vscode-server" / "data" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline"
    ) in places
    assert not any("saoudrizwan" in str(p) or "kilocode" in str(p) for p in places)
    cursor = home / ".config" / "Cursor" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline"
    only = reader.read(reader_context(empty, env={"BOURDON_ROO_CODE_STORE": str(cursor)}))
    assert [s["session_id"] for s in only.manifest["recent_sessions"]] == ["1776783600000"]
    assert reader.health(reader_context(empty, env={"BOURDON_ROO_CODE_STORE": str(cursor)})).ok


def test_a_custom_storage_path_in_the_editors_settings(tmp_path: Path) -> None:
    home = tmp_path / "home"
    moved = tmp_path / "elsewhere" / "roo tasks"
    task = moved / "tasks" / "1776000000000"
    task.mkdir(parents=True)
    (task / "history_item.json").write_text(
        '{"id": "1776000000000", "ts": 1776000000000, "task": "moved task"}'
    )
    code = home / ".config" / "Code" / "User"
    code.mkdir(parents=True)
    (code / "settings.json").write_text(
        "{\n  // where Roo keeps its tasks\n"
        f'  "roo-cline.customStoragePath": "{moved}", /* set by hand */\n'
        '  "http.proxy": "http://proxy:8080/*not a comment*/ ,}",\n'
        '  "editor.fontSize": 13,\n}\n'
    )
    cursor = home / ".config" / "Cursor" / "User"
    cursor.mkdir(parents=True)
    (cursor / "settings.json").write_text('{"roo-cline.customStoragePath": ')  # cut mid-write
    reader = RooCodeReader()
    ctx = reader_context(home)
    assert reader.locations(ctx)[0] == moved
    settings = loads_jsonc((code / "settings.json").read_text())
    assert settings["http.proxy"] == "http://proxy:8080/*not a comment*/ ,}"
    assert reader.health(ctx).ok
    got = reader.read(ctx)
    assert [s["key_actions"] for s in got.manifest["recent_sessions"]] == [["moved task"]]


def test_a_huge_ui_messages_file_is_skipped_with_a_count(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_JSON_FILE", 1000)  # T1's ui and API files are larger
    got = RooCodeReader().read(reader_context(home))
    assert got.stats.too_large == 2 and any("too large" in p for p in got.stats.problems)
    report = session(got, "1776205800000")  # its history item and metadata are still read
    assert report["key_actions"] == ["Add a monthly report command"]
    assert report["files_touched"] == ["ledgerline/report.py", "tests/test_report.py"]
