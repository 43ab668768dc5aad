"""The Copilot CLI reader: golden manifest, messy stores, read-only access, live WAL store."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import load_readers
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.copilot_cli import CopilotCliReader, edit_paths, parse_flat_yaml
from bourdon.store.library import Library
from bourdon.testing.readercheck import (
    check_golden,
    golden_text,
    reader_context,
    sessions_by,
    snapshot,
)
from tests.support.stores import copilot_cli as store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "copilot-cli.yaml"


# -- the store, read once -------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("copilot-cli") / "home"
    store.write_store(root)
    return root


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return CopilotCliReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    readers, _ = load_readers()
    reader = readers["copilot-cli"]
    assert isinstance(reader, Reader) and isinstance(reader, CopilotCliReader)
    assert (reader.agent_type, reader.store_env) == ("code-assistant", "BOURDON_COPILOT_CLI_STORE")


def test_golden_manifest(home: Path, result: ReadResult) -> None:
    check_golden(GOLDEN, golden_text(result, home))


def test_messy_sessions_are_survived(result: ReadResult) -> None:
    stats = result.stats
    assert stats.partial_tail == 1  # the torn last line of the live session
    assert stats.skipped == 1  # the unknown event type
    assert stats.problems == []
    # The live, crashed session: everything before and after the bad records is read; the
    # duplicate event counts once; the failed edit is not a touched file.
    (live,) = sessions_by(result, "Monthly report")
    assert live["key_actions"] == [
        "Monthly report",
        "add a monthly report command",
        "Marco wants CSV output too",
    ]
    assert live["files_touched"] == ["ledgerline/report.py"]
    assert live["date"] == "2026-06-15"  # 22:30 UTC on 14 June is 00:30 in Paris
    # Invalid UTF-8 replaced; +02:00 offsets; no workspace.yaml: cwd from session.start.
    (bare,) = [
        s for s in result.manifest["recent_sessions"] if "fix the café" in s["key_actions"][0]
    ]
    assert "\ufffd" in bare["key_actions"][0] and bare["date"] == "2026-06-20"
    assert bare["cwd"].endswith("/src/docs-site") and bare["files_touched"] == ["docs/index.md"]
    # No event timestamps: workspace.yaml created_at; a trailing comment is not in the title.
    (undated,) = sessions_by(result, "Subnet rename")
    assert undated["date"] == "2026-06-22"
    assert undated["cwd"] == "C:\\Users\\dana\\src\\infra-terraform"
    assert undated["files_touched"] == ["modules/net/subnets.tf"]
    # Empty templates produce nothing.
    assert result.stats.sessions == len(result.manifest["recent_sessions"]) == 14


def test_database_only_session_from_the_wal(result: ReadResult) -> None:
    (gone,) = sessions_by(result, "Payee matching")
    assert gone["date"] == "2026-06-12"  # epoch ms as a string
    assert gone["key_actions"] == [
        "Payee matching",
        "match payees with rapidfuzz",
        "use a cutoff of 85",
    ]
    assert gone["files_touched"] == ["ledgerline/payees.py"]  # the "view" row is not an edit


def test_visibility_and_entities(result: ReadResult) -> None:
    rows = result.manifest["recent_sessions"]
    private = {s["session_id"] for s in rows if s["visibility"] == "private"}
    assert private == {s["session_id"] for s in rows if "/private/taxes" in s.get("cwd", "")}
    assert len(private) == 2
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert entities["taxes"]["visibility"] == "private"
    assert entities["taxes/receipts_2025.py"]["visibility"] == "private"
    assert entities["ledgerline"]["visibility"] == "team"


def test_no_credentials_and_instruction_notes(result: ReadResult) -> None:
    assert store.TOKEN not in yamlio.dump(result.manifest).decode()
    notes = result.manifest["notes"]
    assert [n.get("related_entities") for n in notes] == [None, ["ledgerline"]]
    assert all("\r" not in n["text"] for n in notes)


def test_the_store_is_never_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store.write_store(home, seed=5, sessions=3)
    before = snapshot(home)
    assert any(name.endswith("session-store.db-wal") for name in before)
    CopilotCliReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("copilot-cli", result.manifest, reader="copilot-cli")
        counts = library.read("copilot-cli").counts()
        assert counts["recent_sessions"] == len(result.manifest["recent_sessions"])
        assert counts["known_entities"] == len(result.manifest["known_entities"])
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path) -> None:
    reader = CopilotCliReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    moved = store.write_store(tmp_path / "other", sessions=2)
    assert reader.read(reader_context(empty, env={"COPILOT_HOME": str(moved)})).stats.sessions > 0
    assert (
        reader.read(
            reader_context(empty, env={"BOURDON_COPILOT_CLI_STORE": str(moved)})
        ).stats.sessions
        > 0
    )
    assert reader.read(reader_context(empty, store=moved)).stats.sessions > 0


def test_flat_yaml() -> None:
    text = (
        "\ufeffid: 0d5e\r\n"
        'name: "Add: \\"quoted\\" \\u00e9"\r\n'
        "title: 'it''s # not a comment'\r\n"
        "cwd: /home/dana/src/x  # a comment\r\n"
        "empty:\r\n"
        "none: null\r\n"
        "nested:\r\n  key: value\r\n"
        "- a list item\r\n"
        "summary: >\r\n  folded\r\n  text\r\n"
        "after: 1\r\n"
    )
    assert parse_flat_yaml(text) == {
        "id": "0d5e",
        "name": 'Add: "quoted" é',
        "title": "it's # not a comment",
        "cwd": "/home/dana/src/x",
        "summary": "folded text",
        "after": "1",
    }


def test_edit_paths() -> None:
    assert edit_paths("create", {"path": "a.py"}) == ["a.py"]
    assert edit_paths("view", {"path": "a.py"}) == []
    assert edit_paths("str_replace_editor", {"command": "view", "path": "a.py"}) == []
    assert edit_paths(
        "apply_patch", "*** Begin Patch\n*** Add File: b.py\n*** Delete File: c.py\n"
    ) == ["b.py", "c.py"]
    assert edit_paths("edit", '{"file_path": "d.py"}') == ["d.py"]
    assert edit_paths(None, {"path": "a.py"}) == []


# -- a writer inserting while the reader polls ---------------------------------------------------

WRITER = r"""
import hashlib, sqlite3, sys, time
path, stop = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(path, timeout=10)
conn.execute("PRAGMA journal_mode=wal")
conn.execute("PRAGMA wal_autocheckpoint=100")  # a small WAL keeps 1,000 polls fast
conn.execute("PRAGMA synchronous=NORMAL")  # no fsync per commit: leave the CPU to the reader
print("ready", flush=True)
i = 0
while True:
    slot, generation = i % 12, i // 12
    digest = hashlib.sha256(f"{slot}-{generation}".encode()).hexdigest()[:12]
    sid = f"s{slot:03d}"
    with conn:
        conn.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?, NULL, 'cli', 'main', ?, ?, NULL)",
                     (sid, f"/home/dana/src/p{slot}", f"task {slot} {generation} {digest}",
                      f"2026-06-01T08:{slot:02d}:00Z"))
        conn.execute("DELETE FROM turns WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM session_files WHERE session_id = ?", (sid,))
        conn.execute("INSERT INTO turns VALUES (?, 0, ?, 'ok', NULL)",
                     (sid, f"prompt {slot} {generation} {digest}"))
        conn.execute("INSERT INTO session_files VALUES (?, ?, 'edit', 0)",
                     (sid, f"src/f{slot}_{generation}_{digest}.py"))
    i += 1
    if i % 50 == 0:
        try:
            open(stop).close()
            break
        except OSError:
            pass
    time.sleep(0.002)
conn.close()
"""


def _check(session: dict[str, Any]) -> str:
    title: str = session["key_actions"][0]
    prompt: str = session["key_actions"][1]
    assert len(session["key_actions"]) == 2
    _, slot, generation, digest = title.split()
    assert digest == hashlib.sha256(f"{slot}-{generation}".encode()).hexdigest()[:12], title
    assert prompt == f"prompt {slot} {generation} {digest}", (title, prompt)
    assert session["files_touched"] == [f"src/f{slot}_{generation}_{digest}.py"]
    return generation


def test_live_writer_while_polling_1000_times(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = store.write_db(home / ".copilot" / "session-store.db", {"schema_version": [(4,)]}, {})
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(stop)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        reader, ctx = CopilotCliReader(), reader_context(home)
        seen = 0
        generations: set[str] = set()
        for _ in range(1000):
            result = reader.read(ctx)  # must never raise
            for session in result.manifest["recent_sessions"]:
                generations.add(_check(session))
            seen = max(seen, len(result.manifest["recent_sessions"]))
        assert seen == 12
        assert len(generations) > 10  # the records kept changing while the reader polled
        assert writer.poll() is None, "the writer stopped before the polls ended"
    finally:
        stop.touch()
        try:
            writer.wait(timeout=10)
        finally:
            if writer.poll() is None:
                writer.kill()
            if writer.stdout is not None:
                writer.stdout.close()
