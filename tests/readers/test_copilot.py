"""The VS Code Copilot Chat reader: mutation-log replay, golden manifest, messy stores."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import load_readers
from bourdon.readers.base import Reader, ReadResult, ReadStats
from bourdon.readers.copilot import CopilotReader
from bourdon.readers.copilot.replay import replay
from bourdon.readers.copilot.sessions import session_draft
from bourdon.store.library import Library
from bourdon.testing.readercheck import (
    check_golden,
    golden_text,
    reader_context,
    sessions_by,
    snapshot,
)
from tests.support.stores import copilot as store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "copilot.yaml"


# -- the store, read once -------------------------------------------------------------------


def log(tmp_path: Path, *entries: Any, tail: bytes = b"") -> Path:
    path = tmp_path / "s.jsonl"
    body = b"".join(json.dumps(e).encode() + b"\n" for e in entries)
    path.write_bytes(body + tail)
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("copilot") / "home"
    store.write_store(root)
    return root


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return CopilotReader().read(reader_context(home))


# -- the mutation log ---------------------------------------------------------------------------


def test_replay_applies_every_kind(tmp_path: Path) -> None:
    path = log(
        tmp_path,
        {"kind": 0, "v": {"sessionId": "s", "requests": [], "customTitle": "t0"}},
        {"kind": 2, "k": ["requests"], "v": [{"message": {"text": "a"}, "response": []}]},
        {
            "kind": 2,
            "k": ["requests"],
            "v": [{"message": {"text": "b"}}, {"message": {"text": "c"}}],
        },
        {"kind": 2, "k": ["requests", 0, "response"], "v": [{"value": "x"}]},
        {"kind": 1, "k": ["requests", 1, "message", "text"], "v": "B"},
        {"kind": 2, "k": ["requests"], "v": [{"message": {"text": "d"}}], "i": 2},  # drops c
        {"kind": 2, "k": ["requests", 0, "response"], "i": 0},  # truncate only
        {"kind": 3, "k": ["customTitle"]},
        {"kind": 1, "k": ["inputState"], "v": {"text": "draft"}},
    )
    stats = ReadStats()
    state = replay(path, stats)
    assert state == {
        "sessionId": "s",
        "requests": [
            {"message": {"text": "a"}, "response": []},
            {"message": {"text": "B"}},
            {"message": {"text": "d"}},
        ],
        "inputState": {"text": "draft"},
    }
    assert (stats.records, stats.skipped, stats.partial_tail) == (9, 0, 0)


def test_replay_survives_bad_entries_and_a_torn_tail(tmp_path: Path) -> None:
    path = log(
        tmp_path,
        {"kind": 1, "k": ["customTitle"], "v": "no initial state yet"},
        {"kind": 0, "v": {"requests": []}},
        {"kind": 1, "k": ["requests", 3, "x"], "v": 1},  # no such request
        {"kind": 1, "k": ["nothere", "x"], "v": 1},  # no such key
        {"kind": 7, "k": ["requests"]},  # unknown kind
        {"kind": 2, "k": ["requests"], "v": [{"message": {"text": "kept"}}]},
        tail=b'{"kind": 2, "k": ["requests"], "v": [{"message": {"te',
    )
    stats = ReadStats()
    state = replay(path, stats)
    assert state == {"requests": [{"message": {"text": "kept"}}]}
    assert (stats.skipped, stats.partial_tail) == (4, 1)


def test_a_compacted_log_is_one_initial_line(tmp_path: Path) -> None:
    full = {
        "sessionId": "s",
        "creationDate": 1787000000000,
        "requests": [{"message": {"text": "q"}}],
    }
    assert replay(log(tmp_path, {"kind": 0, "v": full}), ReadStats()) == full
    assert replay(
        log(tmp_path, {"kind": 0, "v": full}, {"kind": 0, "v": {"requests": []}}), ReadStats()
    ) == {"requests": []}  # a later compaction replaces everything before it


def test_session_files_from_every_source() -> None:
    state = {
        "creationDate": 1787000000000,
        "workingDirectory": "file:///home/dana/src/app",
        "requests": [
            {
                "message": {
                    "parts": [{"kind": "text", "text": "fix "}, {"kind": "text", "text": "it"}]
                },
                "response": [
                    {
                        "kind": "textEditGroup",
                        "uri": {"fsPath": "/home/dana/src/app/a.py", "scheme": "file"},
                    },
                    {"kind": "notebookEditGroup", "uri": "file:///home/dana/src/app/n.ipynb"},
                    {
                        "kind": "inlineReference",
                        "inlineReference": {"fsPath": "/home/dana/src/app/r.py"},
                    },
                    {
                        "kind": "toolInvocationSerialized",
                        "toolId": "copilot_createFile",
                        "pastTenseMessage": {"value": "Created [](file:///home/dana/src/app/b.py)"},
                    },
                    {
                        "kind": "toolInvocationSerialized",
                        "toolId": "copilot_readFile",
                        "pastTenseMessage": {"value": "Read [](file:///home/dana/src/app/c.py)"},
                    },
                ],
                "result": {
                    "metadata": {
                        "toolCallRounds": [
                            {
                                "toolCalls": [
                                    {
                                        "name": "multi_replace_string_in_file",
                                        "arguments": json.dumps(
                                            {
                                                "replacements": [
                                                    {"filePath": "/home/dana/src/app/d.py"}
                                                ]
                                            }
                                        ),
                                    },
                                    {
                                        "name": "apply_patch",
                                        "arguments": json.dumps(
                                            {
                                                "input": "*** Begin Patch\n*** Add File: /home/dana/src/app/e.py\n"
                                            }
                                        ),
                                    },
                                    {
                                        "name": "read_file",
                                        "arguments": json.dumps({"filePath": "/x/f.py"}),
                                    },
                                ]
                            }
                        ]
                    }
                },
            }
        ],
    }
    draft = session_draft("s", state, None, "")
    assert draft is not None and draft.prompts == ["fix it"]
    assert draft.cwd == "/home/dana/src/app"
    assert [f.rsplit("/", 1)[-1] for f in draft.files] == [
        "a.py",
        "n.ipynb",
        "b.py",
        "d.py",
        "e.py",
    ]
    assert session_draft("s", {"requests": []}, None, "") is None


# -- the store ----------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    readers, _ = load_readers()
    reader = readers["copilot"]
    assert isinstance(reader, Reader) and isinstance(reader, CopilotReader)
    assert (reader.agent_type, reader.store_env) == ("code-assistant", "BOURDON_COPILOT_STORE")


def test_golden_manifest(home: Path, result: ReadResult) -> None:
    check_golden(GOLDEN, golden_text(result, home))


def test_messy_logs_in_the_store(result: ReadResult) -> None:
    stats = result.stats
    assert stats.partial_tail == 1
    assert stats.skipped == 4  # before the initial state, a missing path, a kind 9, a cut .json
    assert any("cut.json" in p for p in stats.problems)
    # Truncation removed the undone request and its edit; the index supplied the title after
    # the delete; the torn tail is ignored; 21:50 UTC is 23:50 in Paris, still 20 August.
    (export,) = sessions_by(result, "add a CSV export of the ledger")
    assert export["key_actions"] == [
        "CSV export",
        "add a CSV export of the ledger",
        "add the export to the CLI instead",
    ]
    assert export["files_touched"] == ["ledgerline/export.py", "ledgerline/cli.py"]
    assert export["date"] == "2026-08-20"
    everything = yamlio.dump(result.manifest).decode()
    assert "UNDONE" not in everything and "Temporary title" not in everything
    # Compacted to one line; the .json/.jsonl pair gives one session, the longer one.
    assert sessions_by(result, "Docs for import")[0]["files_touched"] == [
        "docs/import.md",
        "mkdocs.yml",
    ]
    (pair,) = sessions_by(result, "what does the reconcile command do?")
    assert pair["files_touched"] == ["ledgerline/reconcile.py"]
    # Invalid UTF-8; no creationDate: the request timestamp dates the session.
    (garbled,) = [s for s in result.manifest["recent_sessions"] if "résumé" in s["key_actions"][0]]
    assert "\ufffd" in garbled["key_actions"][0] and garbled["date"] == "2026-08-25"
    # Stubs without requests produce nothing; the index entry without a file is ignored.
    assert "New Chat" not in everything and "whose file is gone" not in everything
    assert result.stats.sessions == len(result.manifest["recent_sessions"]) == 18


def test_folders_windows_uris_and_flavours(result: ReadResult) -> None:
    sessions = result.manifest["recent_sessions"]
    windows = [s for s in sessions if s.get("cwd") == "c:\\Users\\dana\\src\\infra-terraform"]
    assert windows and any(s.get("files_touched") == ["modules/storage/alarms.tf"] for s in windows)
    assert "cwd" not in sessions_by(result, "list the packages in this workspace")[0]  # multi-root
    assert "cwd" not in sessions_by(result, "write a regex for ISO dates")[0]  # no folder
    assert sessions_by(result, "tidy the scratch script")[0]["cwd"].endswith("/scratch")
    assert sessions_by(result, "try the new agent mode on the docs")  # Code - Insiders
    # Reads are not edits; the chat editing session adds its file.
    assert all(
        "setup.cfg" not in f and "README.md" not in f
        for s in sessions
        for f in s.get("files_touched", [])
    )
    assert any("docs/changelog.md" in s.get("files_touched", []) for s in sessions)


def test_visibility_and_memory_notes(result: ReadResult) -> None:
    for session in result.manifest["recent_sessions"]:
        expected = "private" if "/personal/" in session.get("cwd", "") else "team"
        assert session["visibility"] == expected
    notes = {n["text"]: n for n in result.manifest["notes"]}
    assert "The importer reads ISO and day-first dates." in notes  # continuation line joined
    assert notes["Amounts are Decimal, quantized to 0.01."]["related_entities"] == ["ledgerline"]
    assert {n["tags"][0] for n in notes.values()} == {"copilot-memory", "copilot-instructions"}


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    CopilotReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("copilot", result.manifest, reader="copilot")
        counts = library.read("copilot").counts()
        assert counts["recent_sessions"] == len(result.manifest["recent_sessions"])
        assert counts["notes"] == len(result.manifest["notes"])
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path, home: Path) -> None:
    reader = CopilotReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    places = reader.locations(reader_context(empty))
    assert empty / ".vscode-server" / "data" / "User" in places
    assert empty / "Library" / "Application Support" / "Code - Insiders" / "User" in places
    user = home / ".config" / "Code" / "User"
    insiders = home / ".config" / "Code - Insiders" / "User"
    only = reader.read(reader_context(empty, env={"BOURDON_COPILOT_STORE": str(insiders)}))
    assert only.stats.sessions == 1
    both = reader.read(
        reader_context(empty, env={"BOURDON_COPILOT_STORE": f"{user}{os.pathsep}{insiders}"})
    )
    assert both.stats.sessions == 18
