"""The Cursor reader: golden manifest, messy stores, read-only access, credentials, live WAL."""

from __future__ import annotations

import hashlib
import importlib
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import load_readers
from bourdon.readers.base import Reader, ReadResult, ReadStats
from bourdon.readers.common.paths import uri_path
from bourdon.readers.cursor import CursorReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import (
    check_golden,
    golden_text,
    reader_context,
    sessions_by,
    snapshot,
)
from tests.support.stores import cursor as store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "cursor.yaml"


# -- the store, read once -------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cursor") / "home"
    store.write_store(root)
    return root


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return CursorReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    readers, broken = load_readers()
    assert not [b for b in broken if b.name == "cursor"]
    reader = readers["cursor"]
    assert isinstance(reader, Reader) and isinstance(reader, CursorReader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "cursor",
        "code-assistant",
        "BOURDON_CURSOR_STORE",
    )


def test_golden_manifest(home: Path, result: ReadResult) -> None:
    check_golden(GOLDEN, golden_text(result, home))


def test_reading_twice_gives_the_same_view(home: Path, result: ReadResult) -> None:
    assert CursorReader().read(reader_context(home)).manifest == result.manifest


def test_messy_store_is_survived_and_the_rest_read(result: ReadResult, home: Path) -> None:
    stats = result.stats
    # NULL tombstones (composer and bubble), a non-JSON value and an integer value are skipped,
    # a cut workspace.json too; everything around them is read.
    assert stats.skipped >= 5
    assert any("workspace.json" in p for p in stats.problems)
    assert stats.sessions == len(result.manifest["recent_sessions"]) == 20
    # Committed in the global -wal only (not checkpointed): still read.
    (late,) = sessions_by(result, "add a monthly report command")
    assert late["date"] == "2026-04-28" and late["files_touched"] == [
        "ledgerline/report.py",
        "ledgerline/cli.py",
    ]
    # The legacy chat tab sits in a workspace -wal without -shm: read from a copy.
    (tab,) = sessions_by(result, "how do I add a page to the sidebar nav?")
    assert tab["date"] == "2024-11-12" and tab["session_id"] == "tab-2024-docs"
    # 23:40 UTC on 20 March is 21 March in Paris; ANSI escapes and BEL are stripped.
    (night,) = sessions_by(result, "fix the failing test_money test")
    assert night["date"] == "2026-03-21"
    # The 1 MB tool result and the bubble outside the header manifest are kept; the rejected
    # edit is not a touched file.
    assert night["files_touched"] == ["ledgerline/money.py"]
    assert all(
        "REJECTED" not in f
        for s in result.manifest["recent_sessions"]
        for f in s.get("files_touched", [])
    )
    # Invalid UTF-8 is replaced; a tool call on a user bubble still counts.
    (garbled,) = sessions_by(result, "Payee column")
    assert any("\ufffd" in a for a in garbled["key_actions"])
    assert garbled["files_touched"] == ["ledgerline/payees.py"]
    # createdAt as an epoch-ms string; no timestamp at all gives "".
    assert sessions_by(result, "explain the build warnings")[0]["date"] == "2026-04-05"
    assert sessions_by(result, "a composer with no timestamp at all")[0]["date"] == ""
    # Drafts produce no session.
    assert all(
        s.get("key_actions") or s.get("files_touched") for s in result.manifest["recent_sessions"]
    )


def test_working_directories_and_projects(result: ReadResult) -> None:
    sessions = result.manifest["recent_sessions"]
    cwds = {s.get("cwd") for s in sessions}
    assert "c:\\Users\\dana\\src\\infra-terraform" in cwds  # file:///c%3A/... decoded
    assert "/home/dana/src/harbor" in cwds  # vscode-remote:// folder
    # Claimed by two workspaces, or by a multi-root one: no cwd rather than a guess.
    for title in ("Ambiguous owner", "Multi-root tsconfig"):
        (row,) = sessions_by(result, title)
        assert "cwd" not in row
    # Only in the global catalog: mapped through workspaceIdentifier.
    assert sessions_by(result, "Docs search")[0]["cwd"].endswith("/src/docs-site")
    # The worktree resolves to the repository it belongs to.
    worktree = [s for s in sessions if str(s.get("cwd", "")).endswith("ledgerline-csv")]
    assert worktree and all(s["project_focus"][0] == "ledgerline" for s in worktree)
    projects = {e["name"]: e for e in result.manifest["known_entities"] if e["type"] == "project"}
    assert set(projects) == {"docs-site", "harbor", "infra-terraform", "journal", "ledgerline"}
    assert projects["ledgerline"]["aliases"] == ["ledgerline-csv"]
    files = [e["name"] for e in result.manifest["known_entities"] if e["type"] == "file"]
    assert "ledgerline/ledgerline/money.py" in files


def test_private_folders_make_private_rows(result: ReadResult) -> None:
    manifest = result.manifest
    journal = [s for s in manifest["recent_sessions"] if "journal" in s.get("project_focus", [])]
    assert journal and all(s["visibility"] == "private" for s in journal)
    assert {s["visibility"] for s in manifest["recent_sessions"] if s not in journal} == {"team"}
    entity = next(e for e in manifest["known_entities"] if e["name"] == "journal")
    assert entity["visibility"] == "private"
    tone = next(n for n in manifest["notes"] if "first person" in n["text"])
    assert tone["visibility"] == "private" and tone["related_entities"] == ["journal"]


def test_rules_become_notes(result: ReadResult) -> None:
    texts = [n["text"] for n in result.manifest["notes"]]
    assert any(t.startswith("Cursor rule money (Money handling):") for t in texts)
    assert any("Run pytest -q" in t and "\r" not in t for t in texts)
    assert {n["date"] for n in result.manifest["notes"]} == {"2026-03-02"}


def test_credentials_are_never_selected_nor_exported(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[str] = []
    real = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", traced)
    result = CursorReader().read(reader_context(home))
    monkeypatch.undo()
    out = yamlio.dump(result.manifest).decode() + repr(result.stats)
    for secret in (store.ACCESS_TOKEN, store.REFRESH_TOKEN, "dana@example.com"):
        assert secret not in out
    item_reads = [s for s in statements if "ItemTable" in s and "sqlite_master" not in s]
    assert item_reads
    for sql in item_reads:
        assert "cursorAuth" not in sql and "LIKE" not in sql.upper()
        assert " key IN (" in sql  # exact keys only, never a scan of the table


def test_the_store_is_never_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store.write_store(home, seed=3, sessions=4)
    before = snapshot(home)
    assert any(name.endswith("state.vscdb-wal") for name in before)
    CursorReader().read(reader_context(home))
    assert snapshot(home) == before  # no byte, no mtime changed, no -wal/-shm created


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("cursor", result.manifest, reader="cursor")
        stored = library.read("cursor")
        assert stored.counts()["recent_sessions"] == len(result.manifest["recent_sessions"])
        assert stored.counts()["known_entities"] == len(result.manifest["known_entities"])
        assert stored.counts()["notes"] == len(result.manifest["notes"])
    finally:
        library.close()


def test_locations_env_override_and_missing_store(tmp_path: Path) -> None:
    reader = CursorReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    health = reader.health(reader_context(empty))
    assert not health.ok and "BOURDON_CURSOR_STORE" in (health.fix or "")
    nothing = reader.read(reader_context(empty))
    assert nothing.manifest["recent_sessions"] == [] and nothing.stats.sessions == 0
    roaming = tmp_path / "Roaming"
    assert roaming / "Cursor" / "User" in reader.locations(
        reader_context(empty, env={"APPDATA": str(roaming)})
    )
    mac = empty / "Library" / "Application Support" / "Cursor" / "User"
    assert mac in reader.locations(reader_context(empty))
    # The store written elsewhere, pointed at by the environment variable (its parent works).
    user = store.write_store(tmp_path / "elsewhere", sessions=2)
    env = {"BOURDON_CURSOR_STORE": str(user.parent)}
    assert reader.health(reader_context(empty, env=env)).ok
    assert reader.read(reader_context(empty, env=env)).stats.sessions > 0


def test_uri_paths() -> None:
    assert uri_path("file:///c%3A/Users/dana/src/x") == "c:\\Users\\dana\\src\\x"
    assert uri_path("file:///home/dana/my%20app") == "/home/dana/my app"
    assert uri_path("vscode-remote://wsl%2Bubuntu/home/dana/x") == "/home/dana/x"
    assert uri_path("vscode-vfs://github/dana/x") is None
    assert uri_path("C:\\Users\\dana\\x") == "C:\\Users\\dana\\x"


# -- a writer inserting while the reader polls ---------------------------------------------------

WRITER = r"""
import hashlib, json, sqlite3, sys, time
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
    cid = f"c{slot:03d}"
    with conn:
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{cid}:u", json.dumps(
            {"type": 1, "text": f"prompt {slot} {generation} {digest}"}).encode()))
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{cid}:a", json.dumps(
            {"type": 2, "toolFormerData": {"tool": 7, "name": "edit_file", "params": json.dumps(
                {"target_file": f"src/f{slot}_{generation}_{digest}.py"})}}).encode()))
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{cid}", json.dumps(
            {"composerId": cid, "name": f"task {slot} {generation} {digest}",
             "createdAt": 1772632930112 + i, "fullConversationHeadersOnly": [
                 {"bubbleId": "u", "type": 1}, {"bubbleId": "a", "type": 2}]}).encode()))
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
    expected = hashlib.sha256(f"{slot}-{generation}".encode()).hexdigest()[:12]
    assert digest == expected, f"corrupt record {title!r}"
    # Composer and bubbles were written in one transaction: all from the same generation.
    assert prompt == f"prompt {slot} {generation} {digest}", (title, prompt)
    assert session["files_touched"] == [f"src/f{slot}_{generation}_{digest}.py"]
    return generation


def test_live_writer_while_polling_1000_times(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    store.write_db(db, {"ItemTable": [("cursorAuth/accessToken", store.ACCESS_TOKEN)]})
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(stop)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        reader, ctx = CursorReader(), reader_context(home)
        seen, started = 0, time.monotonic()
        generations: set[str] = set()
        for _ in range(1000):
            result = reader.read(ctx)  # must never raise
            for session in result.manifest["recent_sessions"]:
                generations.add(_check(session))
            seen = max(seen, len(result.manifest["recent_sessions"]))
        assert seen == 12
        assert len(generations) > 10  # the records kept changing while the reader polled
        assert time.monotonic() - started < 60
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
    assert store.ACCESS_TOKEN not in json.dumps(result.manifest)


# -- the blocks every reader here shares (cursor's docstring holds the reference copy) ----

READER_MODULES = ("cursor", "copilot", "copilot_cli", "gemini_cli", "cline")


def _block(text: str, start: str, end: str) -> str | None:
    if start not in text:
        return None
    i = text.index(start)
    return text[i : text.index(end, i)]


def test_the_visibility_rule_is_documented_the_same_in_every_reader() -> None:
    sources = {
        m: importlib.import_module(f"bourdon.readers.{m}").__doc__ or "" for m in READER_MODULES
    }
    rules = {
        " ".join(s.split("Visibility (the same rule in every reader)")[1].split("\n\n")[0].split())
        for s in sources.values()
    }
    assert len(rules) == 1, rules


def test_assembly_keeps_within_the_schema_limits() -> None:
    """The assembly block (identical everywhere, see above) trims every list to its limit."""
    from datetime import UTC, datetime, timedelta

    from bourdon.formats import schema
    from bourdon.readers import cursor as mod

    start = datetime(2026, 1, 1, tzinfo=UTC)
    drafts = [
        mod.Draft(
            session_id=f"s{i}",
            start=start + timedelta(hours=i),
            cwd=f"/home/dana/src/p{i % 7}",
            title="t" * 300,
            prompts=[f"prompt {n} " + "x" * 300 for n in range(11)],
            files=[f"/home/dana/src/p{i % 7}/f{n}.py" for n in range(51)],
        )
        for i in range(501)
    ]
    notes = [
        mod.NoteDraft("2026-01-02", f"{n} " + "n" * 5000, "p1", "t", "/x") for n in range(1100)
    ]
    view = mod.assemble("probe", drafts, notes, reader_context(Path("/nonexistent")), ReadStats())
    sessions = view["recent_sessions"]
    assert len(sessions) == 500 and sessions[0]["session_id"] == "s500"  # newest kept
    assert all(len(s["key_actions"]) == 10 and len(s["files_touched"]) == 50 for s in sessions)
    assert max(len(a) for s in sessions for a in s["key_actions"]) == 256
    assert len(view["notes"]) == 1000 and max(len(n["text"]) for n in view["notes"]) == 4000
    schema.validate({"spec_version": "0.1", "last_updated": "2026-11-30T00:00:00Z", **view})
