"""The Codex reader: golden manifest, messy stores survived, nothing written, valid rows."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bourdon.formats import schema
from bourdon.readers import load_readers
from bourdon.readers.base import ReaderContext, ReadResult
from bourdon.readers.codex import CodexReader
from bourdon.readers.codex.threads import open_sqlite
from bourdon.store.library import Library
from bourdon.testing.readercheck import PARIS, check_golden, golden_text, snapshot
from tests.support.stores.codex import SECRET, write_store

NEW_YORK = ZoneInfo("America/New_York")
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "codex.yaml"
READER = CodexReader()


def read(home: Path, *, tz: Any = PARIS, **kw: Any) -> ReadResult:
    return READER.read(ReaderContext(home=home, tz=tz, **kw))


def session(result: ReadResult, action: str) -> dict[str, Any]:
    found = [s for s in result.manifest["recent_sessions"] if action in s.get("key_actions", [])]
    assert len(found) == 1, (action, found)
    row: dict[str, Any] = found[0]
    return row


def actions(result: ReadResult) -> list[str]:
    return [a for s in result.manifest["recent_sessions"] for a in s.get("key_actions", [])]


def notes(result: ReadResult) -> dict[str, dict[str, Any]]:
    return {n["text"]: n for n in result.manifest["notes"]}


@pytest.fixture(scope="module")
def unit(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, ReadResult, dict[str, Any]]]:
    home = tmp_path_factory.mktemp("codex") / "home"
    write_store(home)
    before = snapshot(home)
    yield home, read(home), before


# -- the golden manifest ------------------------------------------------------------------


def test_the_unit_store_reads_as_the_golden_manifest(unit: tuple[Path, ReadResult, Any]) -> None:
    home, result, _ = unit
    check_golden(GOLDEN, golden_text(result, home, "$HOME"))


def test_reading_is_deterministic_across_homes_and_reads(
    unit: tuple[Path, ReadResult, Any], tmp_path: Path
) -> None:
    home, result, _ = unit
    other = tmp_path / "elsewhere" / "home"
    write_store(other)
    assert golden_text(read(other), other, "$HOME") == golden_text(result, home, "$HOME")
    assert read(home).manifest == result.manifest


def test_the_unit_store_counts_what_it_skipped(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    stats = result.stats
    assert (stats.partial_tail, stats.skipped, stats.too_large) == (1, 3, 0)
    assert stats.sessions == len(result.manifest["recent_sessions"]) == 26
    for kind in ("'hologram_event'", "'telepathy_call'", "'future_line'"):
        assert any(kind in p for p in stats.problems), kind


# -- nothing written, valid rows ------------------------------------------------------------


def test_reading_changes_no_byte_and_no_mtime_and_creates_no_file(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, _, before = unit
    assert {".codex/state_5.sqlite-wal", ".codex/state_5.sqlite-shm"} <= set(before)
    read(home)
    assert snapshot(home) == before


def test_the_view_commits_into_a_library_and_reads_back(
    unit: tuple[Path, ReadResult, Any], tmp_path: Path
) -> None:
    _, result, _ = unit
    with Library.init(tmp_path / "lib") as library:
        library.regenerate("codex", result.manifest, reader="codex")
        stored = library.read("codex").data
    for section in ("known_entities", "recent_sessions", "notes"):
        assert len(stored[section]) == len(result.manifest[section])
        assert all(row["source"]["kind"] == "reader" for row in stored[section])
    schema.validate(
        {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    )


def test_credentials_are_never_read(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    assert SECRET not in json.dumps(result.manifest)


# -- what it extracts -------------------------------------------------------------------------


def test_dates_come_from_utc_records_not_local_folder_names(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    late = "Late night: fix the off-by-one in the month-end report"
    # 23:50 in New York on June 10 = 03:50 UTC June 11; the folder says 2026/06/10.
    assert list((home / ".codex/sessions/2026/06/10").glob("rollout-2026-06-10T23-50-00-*.jsonl"))
    assert session(result, late)["date"] == "2026-06-11"  # 05:50 in Paris
    assert session(read(home, tz=NEW_YORK), late)["date"] == "2026-06-10"


def test_rows_only_in_the_wal_file_are_read(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    # This thread's row was inserted after the last checkpoint and its rollout is gone.
    db_only = session(result, "Add rate limiting to the public endpoints")
    assert db_only["key_actions"][0] == "Rate limiting for the API"
    assert db_only["date"] == "2026-06-16"
    assert db_only["project_focus"][0] == "monorepo"
    late = session(result, "Late night: fix the off-by-one in the month-end report")
    assert "Payee matching rework" in late["project_focus"]  # a title only the database has


def test_the_latest_turn_cwd_wins_and_renames_keep_the_last_name(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    rich = session(result, "Rename the importers package and delete the legacy parser")
    assert rich["cwd"] == f"{home}/src/docs-site"
    assert rich["project_focus"] == ["ledgerline", "docs-site", "Rename importers and document it"]
    assert "Importer rename" not in json.dumps(result.manifest)
    moved = [f for f in rich["files_touched"] if "importers/bank" in f]
    assert [Path(f).name for f in moved] == ["bank.py", "banks.py"]
    assert "docs/importers.md" in rich["files_touched"]
    assert "OLD PROMPT FROM BEFORE COMPACTION" not in json.dumps(result.manifest)


def test_subagents_add_files_to_their_parent_and_forks_keep_their_own_work(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    rich = session(result, "Rename the importers package and delete the legacy parser")
    assert f"{home}/src/ledgerline/ledgerline/cli.py" in rich["files_touched"]
    assert "Update the import paths after the rename" not in actions(result)
    fork = session(result, "In this fork, try the streaming parser instead")
    assert fork["key_actions"] == ["In this fork, try the streaming parser instead"]
    assert fork["files_touched"] == ["ledgerline/stream.py"]


def test_old_rollouts_and_the_shell_form_of_apply_patch(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    old = session(result, "Add a --since option to the export command")
    assert old["key_actions"] == ["Add a --since option to the export command"]
    assert old["files_touched"] == ["ledgerline/export.py"]
    assert "Be terse." not in json.dumps(result.manifest)


def test_history_archive_windows_and_remote_only_clones(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    orphan = session(result, "Draft a runbook for restoring the ledger database")
    assert orphan["date"] == "2026-05-02" and "cwd" not in orphan
    assert session(result, "Tag the terraform modules for the 1.0 release")["date"] == "2026-05-28"
    windows = session(result, "Make the CLI work in PowerShell")
    assert windows["files_touched"] == ["ledgerline/cli.py"]
    copy = session(result, "Compare this old copy with main and list what is missing")
    assert copy["project_focus"] == ["ledgerline"]
    ledger = next(e for e in result.manifest["known_entities"] if e["name"] == "ledgerline")
    assert ledger["aliases"] == ["csv-import", "ledger-line", "ledger-copy"]
    assert "Consolidate the raw memories into MEMORY.md" not in actions(result)


def test_memories_in_both_layouts_become_notes_and_entities(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    _, result, _ = unit
    found = notes(result)
    assert (
        found["The diary bot posts to Dana's private Telegram channel."]["visibility"] == "private"
    )
    assert found["The diary bot posts to Dana's private Telegram channel."]["related_entities"] == [
        "diary-bot"
    ]
    assert found["Dana lives in Lyon and works in English."]["visibility"] == "team"
    assert found["- Dana's therapy schedule drives the weekly summary."]["visibility"] == "private"
    assert (
        found["Never run `terraform apply` without showing the plan first."]["date"] == "2026-06-22"
    )
    assert any(t.startswith("The user asked:") for t in found)
    kinds = {e["name"]: e["type"] for e in result.manifest["known_entities"]}
    assert kinds["Priya Raman"] == "person"
    assert kinds["store amounts as integer cents in the API"] == "decision"
    assert kinds["terraform"] == kinds["pytest"] == "library"
    assert all("extension data" not in t for t in found)


def test_private_folders_make_private_rows(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    assert (
        session(result, "Summarise my therapy notes into the weekly digest")["visibility"]
        == "private"
    )
    rows = [r for s in ("known_entities", "recent_sessions", "notes") for r in result.manifest[s]]
    assert {r["visibility"] for r in rows} == {"team", "private"}
    assert all("source" not in r for r in rows)


# -- targeted messy cases -----------------------------------------------------------------------


def line(
    kind: str, payload: dict[str, Any], stamp: str = "2026-06-01T10:00:00.000Z"
) -> dict[str, Any]:
    return {"timestamp": stamp, "type": kind, "payload": payload}


def said(text: str, stamp: str = "2026-06-01T10:00:00.000Z") -> dict[str, Any]:
    return line("event_msg", {"type": "user_message", "message": text}, stamp)


def meta(sid: str = "t1", cwd: str = "/w/proj", **extra: Any) -> dict[str, Any]:
    return line(
        "session_meta", {"id": sid, "cwd": cwd, "timestamp": "2026-06-01T10:00:00Z", **extra}
    )


def lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def tiny_store(home: Path, body: bytes, name: str = "rollout-2026-06-01T06-00-00-t1.jsonl") -> Path:
    folder = home / ".codex" / "sessions" / "2026" / "06" / "01"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(body)
    return folder / name


MESSY: dict[str, tuple[bytes, list[str], tuple[int, int]]] = {
    # name: (rollout body, key actions read, (partial_tail, skipped))
    "torn last line": (
        lines(meta(), said("first"))
        + b'{"timestamp":"2026-06-01T10:00:01Z","type":"event_msg","pay',
        ["first"],
        (1, 0),
    ),
    "last record without newline": (
        lines(meta(), said("first")) + json.dumps(said("second")).encode(),
        ["first", "second"],
        (0, 0),
    ),
    "garbage lines": (
        lines(meta(), said("first")) + b'not json\n"a string"\n' + lines(said("second")),
        ["first", "second"],
        (0, 2),
    ),
    "BOM, CRLF and blank lines": (
        b"\xef\xbb\xbf"
        + lines(meta(), said("first")).replace(b"\n", b"\r\n")
        + b"\r\n \n"
        + lines(said("second")),
        ["first", "second"],
        (0, 0),
    ),
    "invalid UTF-8 bytes": (
        lines(meta(), said("caf\u00e9")).replace(b"\\u00e9", b"\xff\xc3") + lines(said("second")),
        ["caf\ufffd\ufffd", "second"],
        (0, 0),
    ),
    "lone surrogate escape": (
        lines(meta()) + b'{"timestamp":"2026-06-01T10:00:00Z","type":"event_msg","payload":'
        b'{"type":"user_message","message":"half \\ud83d emoji"}}\n' + lines(said("second")),
        ["half emoji", "second"],
        (0, 0),
    ),
    "NUL and ANSI": (
        lines(
            meta(),
            said("red \x1b[31mtext\x1b[0m \x00"),
            line(
                "response_item",
                {"type": "function_call_output", "call_id": "c", "output": "\x00\x1b[2J"},
            ),
            said("second"),
        ),
        ["red text", "second"],
        (0, 0),
    ),
    "unknown types": (
        lines(
            meta(),
            line("future_line", {}),
            line("event_msg", {"type": "mind_meld"}),
            line("response_item", {"type": "telepathy"}),
            said("after"),
        ),
        ["after"],
        (0, 3),
    ),
    "a resume appends a second session_meta": (
        lines(meta(), said("first"), meta(cwd="/elsewhere"), said("second")),
        ["first", "second"],
        (0, 0),
    ),
}


@pytest.mark.parametrize("case", sorted(MESSY))
def test_each_messy_case_is_survived_and_counted(case: str, tmp_path: Path) -> None:
    body, expected, (partial, skipped) = MESSY[case]
    tiny_store(tmp_path, body)
    result = read(tmp_path)
    assert actions(result) == expected
    assert (result.stats.partial_tail, result.stats.skipped) == (partial, skipped)
    schema.validate(
        {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    )


def test_both_apply_patch_encodings_and_patch_results_give_files(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: b.py\n*** Move to: c.py\n*** End Patch\n"
    tiny_store(
        tmp_path,
        lines(
            meta(),
            line("turn_context", {"cwd": "/w/proj"}),
            line(
                "response_item",
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "call_id": "c1",
                    "input": patch,
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "apply_patch",
                    "call_id": "c2",
                    "arguments": json.dumps({"input": patch.replace("a.py", "d.py")}),
                },
            ),
            line(
                "event_msg",
                {
                    "type": "patch_apply_end",
                    "call_id": "c3",
                    "success": True,
                    "changes": {
                        "/w/proj/e.py": {"type": "delete"},
                        "/w/proj/f.py": {"type": "update", "move_path": "/w/proj/g.py"},
                    },
                },
            ),
            line(
                "event_msg",
                {
                    "type": "patch_apply_end",
                    "call_id": "c4",
                    "success": False,
                    "changes": {"/w/proj/failed.py": {"type": "add"}},
                },
            ),
        ),
    )
    [row] = read(tmp_path).manifest["recent_sessions"]
    assert row["files_touched"] == ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g.py"]


def test_a_rollout_without_timestamps_has_an_empty_date(tmp_path: Path) -> None:
    tiny_store(
        tmp_path,
        b'{"type":"session_meta","payload":{"id":"t1","cwd":"/w"}}\n'
        b'{"type":"event_msg","payload":{"type":"user_message","message":"no time"}}\n',
    )
    [row] = read(tmp_path).manifest["recent_sessions"]
    assert row["date"] == "" and row["key_actions"] == ["no time"]


def test_empty_files_and_missing_stores_give_empty_views(tmp_path: Path) -> None:
    tiny_store(tmp_path, b"")
    assert read(tmp_path).manifest["recent_sessions"] == []
    assert read(tmp_path / "nowhere").rows == 0


# -- the thread database ------------------------------------------------------------------------


def make_db(path: Path, rows: int, *, keep_open: bool = False) -> sqlite3.Connection | None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER, cwd TEXT, title TEXT, first_user_message TEXT)"
    )
    for n in range(rows):
        db.execute(
            "INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?)",
            (
                f"db{n}",
                "/gone.jsonl",
                1780000000 + n,
                "/w/db",
                f"chk {n} {checksum(n)}",
                f"chk {n} {checksum(n)}",
            ),
        )
    db.commit()
    if keep_open:
        return db
    db.close()
    return None


def test_a_cleanly_closed_wal_database_is_read_from_a_copy(tmp_path: Path) -> None:
    store = tmp_path / ".codex"
    store.mkdir()
    make_db(store / "state_5.sqlite", 3)
    assert not (store / "state_5.sqlite-wal").exists()  # closed: checkpointed, WAL removed
    before = snapshot(store)
    result = read(tmp_path)
    assert sorted(s["session_id"] for s in result.manifest["recent_sessions"]) == [
        "db0",
        "db1",
        "db2",
    ]
    assert snapshot(store) == before  # mode=ro would have created -wal and -shm here


def test_open_sqlite_refuses_what_is_not_a_database(tmp_path: Path) -> None:
    fake = tmp_path / "state_5.sqlite"
    fake.write_bytes(b"not a database at all" * 10)
    with open_sqlite(fake) as db:
        assert db is None
    plain = tmp_path / "plain.sqlite"
    with sqlite3.connect(plain) as db:
        db.execute("CREATE TABLE t (x)")
    db.close()
    with open_sqlite(plain) as ro:
        assert ro is not None
        with pytest.raises(sqlite3.OperationalError):
            ro.execute("INSERT INTO t VALUES (1)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.sqlite", "state_5.sqlite"]


# -- locations and health -------------------------------------------------------------------


def test_codex_home_env_and_health(tmp_path: Path) -> None:
    custom = tmp_path / "elsewhere"
    tiny_store(custom.parent, lines(meta(), said("from CODEX_HOME")))
    (tmp_path / ".codex").rename(custom)
    ctx = ReaderContext(home=tmp_path, tz=PARIS, env={"CODEX_HOME": str(custom)})
    assert actions(READER.read(ctx)) == ["from CODEX_HOME"]
    assert READER.health(ctx).ok
    missing = READER.health(ReaderContext(home=tmp_path))
    assert not missing.ok and "CODEX_HOME" in (missing.fix or "")


def test_the_reader_is_registered() -> None:
    readers, _ = load_readers()
    assert isinstance(readers["codex"], CodexReader)
    assert (READER.name, READER.agent_type, READER.store_env) == (
        "codex",
        "code-assistant",
        "CODEX_HOME",
    )


# -- acceptance: a live writer ------------------------------------------------------------------


def checksum(n: int) -> str:
    return hashlib.sha256(f"record-{n}".encode()).hexdigest()[:12]


def test_polling_while_a_writer_appends_and_inserts_never_emits_a_partial_record(
    tmp_path: Path,
) -> None:
    """A writer appends to a rollout (some lines in two write() calls, a poll in between) and
    inserts rows into a WAL database it keeps open, while the reader polls 1,000 times."""
    root = tmp_path / ".codex"
    folder = root / "sessions" / "2026" / "06" / "01"
    folder.mkdir(parents=True)
    db = make_db(root / "state_5.sqlite", 1, keep_open=True)
    assert db is not None
    db.close()
    stop = threading.Event()
    polls = [0]
    written = [0]

    def writer() -> None:
        conn = sqlite3.connect(root / "state_5.sqlite")
        conn.execute("PRAGMA synchronous=OFF")  # no fsync storms on a shared test machine
        try:
            n = 1
            while not stop.is_set() and n < 100:
                tid = f"live-{n // 25:03d}"
                path = folder / f"rollout-2026-06-01T06-00-00-{tid}.jsonl"
                data = lines(
                    *([meta(tid, "/w/live")] if n % 25 == 0 or n == 1 else []),
                    said(f"chk {n} {checksum(n)}"),
                )
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                try:
                    if n % 3 == 1:
                        cut = 1 + (n * 7919) % (len(data) - 1)
                        os.write(fd, data[:cut])
                        seen, deadline = polls[0], time.monotonic() + 1.0
                        while (
                            polls[0] < seen + 2
                            and time.monotonic() < deadline
                            and not stop.is_set()
                        ):
                            time.sleep(0.0005)
                        os.write(fd, data[cut:])
                    else:
                        os.write(fd, data)
                finally:
                    os.close(fd)
                with conn:  # one transaction: a row and its title together
                    conn.execute(
                        "INSERT INTO threads (id, rollout_path, created_at, cwd) VALUES (?, '/gone', ?, '/w/db')",
                        (f"db{n}", 1780000000 + n),
                    )
                    conn.execute(
                        "UPDATE threads SET title = ?, first_user_message = ? WHERE id = ?",
                        (f"chk {n} {checksum(n)}", f"chk {n} {checksum(n)}", f"db{n}"),
                    )
                n += 1
                written[0] = n
                time.sleep(0.005)
        finally:
            conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    pattern = re.compile(r"^chk (\d+) ([0-9a-f]{12})$")
    torn = from_db = 0
    try:
        for _ in range(1000):
            result = READER.read(ReaderContext(home=tmp_path, tz=PARIS, store=root))
            polls[0] += 1
            torn += result.stats.partial_tail
            for row in result.manifest["recent_sessions"]:
                for action in row.get("key_actions", []) + row.get("project_focus", [])[1:]:
                    match = pattern.match(action)
                    assert match and checksum(int(match.group(1))) == match.group(2), action
                from_db += row["session_id"].startswith("db")
    finally:
        stop.set()
        thread.join()
    assert torn > 0 and from_db > 0
    final = READER.read(ReaderContext(home=tmp_path, tz=PARIS, store=root))
    ids = {row["session_id"] for row in final.manifest["recent_sessions"]}
    assert {f"db{n}" for n in range(written[0])} <= ids


def test_records_of_the_wrong_shape_are_survived(tmp_path: Path) -> None:
    deep = b'{"type":"event_msg","payload":' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    hostile = [
        {"type": ["event_msg"], "payload": {}},
        {"type": "event_msg", "payload": {"type": ["user_message"]}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": ["x"]}},
        {"type": "event_msg", "payload": {"type": "patch_apply_end", "changes": [1, 2]}},
        {
            "type": "event_msg",
            "payload": {"type": "patch_apply_end", "changes": {"/a": 5, "/b": {"move_path": 3}}},
        },
        {"type": "response_item", "payload": {"type": "function_call", "arguments": "[" * 5000}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": "not a list"},
        },
        {
            "type": "session_meta",
            "payload": {
                "id": 5,
                "cwd": {},
                "source": {"subagent": [{"parent_thread_id": 7}]},
                "git": "x",
            },
        },
        {"type": "turn_context", "payload": {"cwd": []}},
        {"type": "session_meta", "payload": "a string"},
    ]
    body = lines(meta(), *hostile) + deep + lines(said("survivor"))
    tiny_store(tmp_path, body)
    db = sqlite3.connect(tmp_path / ".codex" / "state_5.sqlite")
    db.execute(
        "CREATE TABLE threads (id, rollout_path, created_at, cwd, title, first_user_message)"
    )
    db.execute("INSERT INTO threads VALUES ('odd', x'00ff', 'abc', NULL, x'c3', 7)")
    db.execute("INSERT INTO threads VALUES (5, NULL, NULL, NULL, NULL, NULL)")
    db.commit()
    db.close()
    result = read(tmp_path)
    assert "survivor" in actions(result)
    assert "odd" in {s["session_id"] for s in result.manifest["recent_sessions"]}
    schema.validate(
        {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    )
