"""The Claude Code reader: golden manifest, messy stores survived, nothing written, valid rows."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bourdon.formats import schema
from bourdon.readers import load_readers
from bourdon.readers.base import MAX_LINE, ReaderContext, ReadResult
from bourdon.readers.claude_code import ClaudeCodeReader
from bourdon.readers.common.privacy import is_private_path
from bourdon.store.library import Library
from bourdon.testing.readercheck import PARIS, check_golden, golden_text, snapshot
from tests.support.stores.claude_code import write_store

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "claude-code.yaml"
READER = ClaudeCodeReader()


def read(home: Path, *, tz: Any = PARIS, **kw: Any) -> ReadResult:
    return READER.read(ReaderContext(home=home, tz=tz, **kw))


def session(result: ReadResult, action: str) -> dict[str, Any]:
    """The one session whose key actions include ``action``."""
    found = [s for s in result.manifest["recent_sessions"] if action in s.get("key_actions", [])]
    assert len(found) == 1, (action, found)
    row: dict[str, Any] = found[0]
    return row


def entity(result: ReadResult, name: str) -> dict[str, Any]:
    found = [e for e in result.manifest["known_entities"] if e["name"] == name]
    assert len(found) == 1, name
    row: dict[str, Any] = found[0]
    return row


@pytest.fixture(scope="module")
def unit(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, ReadResult, dict[str, Any]]]:
    """The unit store, read once: (home, result, snapshot of the home before the read)."""
    home = tmp_path_factory.mktemp("claude") / "home"
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
    assert (stats.partial_tail, stats.skipped, stats.too_large) == (1, 2, 0)
    assert stats.sessions == len(result.manifest["recent_sessions"]) == 32
    assert any("'hologram'" in p for p in stats.problems)
    assert any("'future-record'" in p for p in stats.problems)


def test_a_resumed_read_of_an_unchanged_store_is_the_same_view_and_reads_nothing(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, before = unit
    state = result.resume
    assert state is not None
    assert json.loads(json.dumps(state)) == state  # plain values: the pipeline keeps it as JSON
    again = ClaudeCodeReader().read_from(
        ReaderContext(home=home, tz=PARIS, machine="test-box"), json.loads(json.dumps(state))
    )
    assert again.manifest == result.manifest
    assert (again.stats.files, again.stats.records) == (result.stats.files, result.stats.records)
    tails = again.stats.bytes_read  # only the unfinished last lines are read again
    assert 0 < tails < 1000 < result.stats.bytes_read
    assert snapshot(home) == before


# -- nothing written, valid rows ------------------------------------------------------------


def test_reading_changes_no_byte_and_no_mtime_in_the_home(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, _, before = unit
    read(home)
    assert snapshot(home) == before


def test_the_view_commits_into_a_library_and_reads_back(
    unit: tuple[Path, ReadResult, Any], tmp_path: Path
) -> None:
    _, result, _ = unit
    with Library.init(tmp_path / "lib") as library:
        library.regenerate("claude-code", result.manifest, reader="claude-code")
        stored = library.read("claude-code").data
    for section in ("known_entities", "recent_sessions", "notes"):
        assert len(stored[section]) == len(result.manifest[section])
        for row in stored[section]:
            assert row["source"]["kind"] == "reader"
            assert row["visibility"] in ("team", "private")
    manifest = {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    schema.validate(manifest)


def test_no_row_sets_its_own_source(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    for section in ("known_entities", "recent_sessions", "notes"):
        assert all("source" not in row for row in result.manifest[section])


# -- what it extracts -------------------------------------------------------------------------


def test_sessions_take_date_cwd_and_actions_from_records(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    rich = session(result, "Import the ING statement format too")
    assert rich["date"] == "2026-06-08"
    assert rich["cwd"] == f"{home}/src/ledgerline"
    # The custom title beats the AI ones; wrappers, isMeta, compaction summary are not prompts.
    assert rich["key_actions"] == [
        "ING importer",
        "Import the ING statement format too",
        "Now add the test for the ING importer",
    ]
    assert rich["project_focus"] == ["ledgerline", "ING importer"]
    assert rich["files_touched"] == [
        "ledgerline/importers/ing.py",
        "tests/test_importers.py",
        "notebooks/explore.ipynb",
    ]


def test_dates_are_in_the_users_time_zone(unit: tuple[Path, ReadResult, Any]) -> None:
    home, result, _ = unit
    # 07:30+08:00 is 23:30 UTC on June 9: June 10 in Paris, June 9 in New York.
    assert session(result, "Review the timezone handling in report.py")["date"] == "2026-06-10"
    other = read(home, tz=ZoneInfo("America/New_York"))
    assert session(other, "Review the timezone handling in report.py")["date"] == "2026-06-09"


def test_subagent_transcripts_add_files_to_their_parent(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    parent = session(result, "Plan the migration of the state bucket to a new region")
    assert parent["date"] == "2026-06-14"  # resumed two days later, dated by its first record
    assert parent["files_touched"] == ["backend.tf", "modules/a1b2/main.tf", "modules/b9c8/main.tf"]
    actions = [a for s in result.manifest["recent_sessions"] for a in s.get("key_actions", [])]
    assert "Update module sources to the new registry" not in actions


def test_a_fork_keeps_only_its_own_work(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    fork = session(result, "In the fork: try the other rounding mode instead")
    assert fork["key_actions"] == ["In the fork: try the other rounding mode instead"]
    assert fork["files_touched"] == ["ledgerline/rounding.py"]
    rows = result.manifest["recent_sessions"]
    [parent] = [
        r
        for r in rows
        if r is not fork and (r["date"], r.get("cwd")) == (fork["date"], fork["cwd"])
    ]
    assert parent["key_actions"][1:] == [  # the copied prompts count once, for the parent
        "Wire the importer into the CLI with a --dry-run flag",
        "Why does the monthly report skip the last day of the month?",
    ]


def test_legacy_summary_titles_the_session_holding_its_leaf(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    _, result, _ = unit
    legacy = session(result, "Port the importer to Python 3.11")
    assert legacy["key_actions"][0] == "Importer ported to Python 3.11"
    texts = json.dumps(result.manifest)
    assert "A conversation from another session" not in texts


def test_history_keeps_sessions_whose_transcripts_were_swept(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    swept = session(result, "Draft the terraform module for the queue")
    assert swept["session_id"] == "7d1e9c0a-5b2f-4c8e-9a61-0f3b2d4c6e88"
    assert swept["date"] == "2026-05-03"
    old = session(result, "Set up the ledgerline repository with uv")
    assert "session_id" not in old and old["cwd"] == f"{home}/src/ledgerline"
    assert old["key_actions"][1] == "Fix the café \ufffd\ufffd encoding bug in the exporter"
    assert all("/clear" not in s.get("key_actions", []) for s in result.manifest["recent_sessions"])


def test_projects_are_one_identity_across_worktrees_clones_and_windows(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    home, result, _ = unit
    ledger = entity(result, "ledgerline")
    assert ledger["aliases"] == ["csv-import", "ledger-line"]
    rows = result.manifest["recent_sessions"]
    for folder in ("src/ledgerline-wt/csv-import", "work/ledger-line"):
        found = [r for r in rows if r.get("cwd") == f"{home}/{folder}"]
        assert found and all(r["project_focus"][0] == "ledgerline" for r in found)
    windows = session(result, "Make the importer work with Windows line endings")
    assert windows["cwd"] == "C:\\Users\\dana\\src\\ledgerline"
    assert windows["files_touched"] == ["ledgerline/importers/csv_bank.py", "ledgerline/cli.py"]
    assert entity(result, "monorepo")["type"] == "project"  # cwd packages/api, repo monorepo
    assert entity(result, "my_app")["name"] != entity(result, "my-app")["name"]
    assert "project_focus" not in session(result, "What is using all the disk space?")


def test_private_folders_and_tagged_memory_are_private(unit: tuple[Path, ReadResult, Any]) -> None:
    _, result, _ = unit
    assert (
        session(result, "Add my therapist's appointments to the weekly summary")["visibility"]
        == "private"
    )
    assert entity(result, "diary-bot")["visibility"] == "private"
    assert entity(result, "bot.py")["visibility"] == "private"
    notes = {n["text"]: n["visibility"] for n in result.manifest["notes"]}
    assert notes["Dana takes Fridays off for physiotherapy until August."] == "private"
    assert notes["The family budget spreadsheet export is in ~/personal"] == "private"
    assert (
        notes["My sandbox bank login lives in 1Password, item 'ledgerline sandbox'."] == "private"
    )
    assert notes["Use uv for Python projects."] == "team"
    rows = [r for s in ("known_entities", "recent_sessions", "notes") for r in result.manifest[s]]
    assert {r["visibility"] for r in rows} == {"team", "private"}


def test_memory_files_give_people_decisions_libraries_and_notes(
    unit: tuple[Path, ReadResult, Any],
) -> None:
    _, result, _ = unit
    priya = entity(result, "Priya Raman")
    assert priya["type"] == "person" and priya["aliases"] == ["Priya", "praman"]
    assert priya["last_touched"] == "2026-06-20"  # MEMORY.md's mtime, in Paris
    assert entity(result, "Marco Bianchi")["type"] == "person"
    assert entity(result, "Store amounts as Decimal")["type"] == "decision"
    assert entity(result, "rapidfuzz")["type"] == "library"
    assert entity(result, "pandas")["type"] == "library"
    notes = [n for n in result.manifest["notes"] if "tests/data/ofx" in n["text"]]
    assert notes[0]["text"] == (
        "Sandbox statements live in tests/data/ofx/ and are\nanonymised by scripts/scrub.py."
    )
    assert notes[0]["related_entities"] == ["ledgerline"]
    assert entity(result, "ledgerline/cli.py")["type"] == "file"


# -- targeted messy cases -----------------------------------------------------------------------


def record(
    kind: str, n: int, *, cwd: str = "/w/proj", sid: str = "s1", **fields: Any
) -> dict[str, Any]:
    base = {"type": kind, "uuid": f"u{n}", "sessionId": sid, "cwd": cwd}
    base["timestamp"] = f"2026-06-0{1 + n % 9}T10:00:00.000Z"
    return base | fields


def prompt(n: int, text: str, **kw: Any) -> dict[str, Any]:
    return record("user", n, message={"role": "user", "content": text}, **kw)


def tiny_store(home: Path, body: bytes, sid: str = "s1") -> Path:
    folder = home / ".claude" / "projects" / "-w-proj"
    folder.mkdir(parents=True)
    (folder / f"{sid}.jsonl").write_bytes(body)
    return folder / f"{sid}.jsonl"


def lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def actions(result: ReadResult) -> list[str]:
    return [a for s in result.manifest["recent_sessions"] for a in s.get("key_actions", [])]


MESSY: dict[str, tuple[bytes, list[str], tuple[int, int, int]]] = {
    # name: (file body, key actions read, (partial_tail, skipped, too_large))
    "torn last line": (
        lines(prompt(1, "first")) + b'{"type":"user","uuid":"u2","message":{"content":"cut',
        ["first"],
        (1, 0, 0),
    ),
    "last record without newline": (
        lines(prompt(1, "first")) + json.dumps(prompt(2, "second")).encode(),
        ["first", "second"],
        (0, 0, 0),
    ),
    "garbage line in the middle": (
        lines(prompt(1, "first")) + b"{not json at all\n[1, 2]\n" + lines(prompt(2, "second")),
        ["first", "second"],
        (0, 2, 0),
    ),
    "BOM, CRLF and blank lines": (
        b"\xef\xbb\xbf"
        + lines(prompt(1, "first")).replace(b"\n", b"\r\n")
        + b"\r\n  \n\n"
        + lines(prompt(2, "second")).replace(b"\n", b"\r\n"),
        ["first", "second"],
        (0, 0, 0),
    ),
    "invalid UTF-8 bytes": (
        lines(prompt(1, "caf\u00e9")).replace(b"\\u00e9", b"\xff\xfe\xc3")
        + lines(prompt(2, "second")),
        ["caf\ufffd\ufffd\ufffd", "second"],
        (0, 0, 0),
    ),
    "lone surrogate escape": (
        b'{"type":"user","uuid":"u1","sessionId":"s1","cwd":"/w/proj","timestamp":"2026-06-01T10:00:00Z",'
        b'"message":{"content":"emoji \\ud83d cut"}}\n' + lines(prompt(2, "second")),
        ["emoji cut", "second"],
        (0, 0, 0),
    ),
    "NUL and ANSI in text and tool output": (
        lines(
            prompt(1, "red \x1b[31mtext\x1b[0m and \x00 nul"),
            record(
                "user",
                2,
                message={
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": "\x00\x1b[2J"}
                    ]
                },
            ),
            prompt(3, "second"),
        ),
        ["red text and nul", "second"],
        (0, 0, 0),
    ),
    "unknown record and block types": (
        lines(
            record("hologram", 1),
            record("assistant", 2, message={"content": [{"type": "telepathy"}]}),
            prompt(3, "after the unknown ones"),
        ),
        ["after the unknown ones"],
        (0, 2, 0),
    ),
    "side records without cwd or timestamp": (
        lines(
            {"type": "permission-mode", "permissionMode": "default", "sessionId": "s1"},
            {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
            {"type": "ai-title", "aiTitle": "Titled", "sessionId": "s1"},
            prompt(4, "first"),
        ),
        ["Titled", "first"],
        (0, 0, 0),
    ),
    "duplicate records": (
        lines(prompt(1, "first"), prompt(1, "first"), prompt(2, "second")),
        ["first", "second"],
        (0, 0, 0),
    ),
}


@pytest.mark.parametrize("case", sorted(MESSY))
def test_each_messy_case_is_survived_and_counted(case: str, tmp_path: Path) -> None:
    body, expected, (partial, skipped, too_large) = MESSY[case]
    tiny_store(tmp_path, body)
    result = read(tmp_path)
    assert actions(result) == expected
    stats = result.stats
    assert (stats.partial_tail, stats.skipped, stats.too_large) == (partial, skipped, too_large)
    schema.validate(
        {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    )


def test_a_line_over_the_size_limit_is_skipped_unread(tmp_path: Path) -> None:
    huge = prompt(2, "x" * (MAX_LINE + 10))
    tiny_store(tmp_path, lines(prompt(1, "before"), huge, prompt(3, "after")))
    result = read(tmp_path)
    assert actions(result) == ["before", "after"]
    assert result.stats.too_large == 1


def test_time_zone_forms_all_give_the_local_date(tmp_path: Path) -> None:
    forms = {
        "a": "2026-06-09T23:30:00Z",
        "b": "2026-06-10T07:30:00.123456+08:00",
        "c": "2026-06-09T23:30:00.000000Z",
    }
    folder = tmp_path / ".claude" / "projects" / "-w"
    folder.mkdir(parents=True)
    for sid, stamp in forms.items():
        (folder / f"{sid}.jsonl").write_bytes(
            lines(prompt(1, f"p {sid}", sid=sid, timestamp=stamp))
        )
    dates = {s["session_id"]: s["date"] for s in read(tmp_path).manifest["recent_sessions"]}
    assert dates == {"a": "2026-06-10", "b": "2026-06-10", "c": "2026-06-10"}


def test_a_session_without_any_timestamp_has_an_empty_date(tmp_path: Path) -> None:
    tiny_store(tmp_path, lines({"type": "ai-title", "aiTitle": "Only a title", "sessionId": "s1"}))
    [row] = read(tmp_path).manifest["recent_sessions"]
    assert row["date"] == "" and row["key_actions"] == ["Only a title"]


def test_empty_and_missing_stores_give_empty_views(tmp_path: Path) -> None:
    tiny_store(tmp_path, b"")
    assert read(tmp_path).manifest["recent_sessions"] == []
    assert read(tmp_path / "nowhere").rows == 0


def test_limits_hold_for_busy_sessions(tmp_path: Path) -> None:
    records = [prompt(i, f"prompt number {i}") for i in range(15)]
    for i in range(60):
        use = {
            "type": "tool_use",
            "id": f"t{i}",
            "name": "Write",
            "input": {"file_path": f"/w/proj/f{i}.py"},
        }
        records.append(record("assistant", 100 + i, message={"content": [use]}))
    records.append({"type": "custom-title", "customTitle": "Busy " * 80, "sessionId": "s1"})
    tiny_store(tmp_path, lines(*records))
    [row] = read(tmp_path).manifest["recent_sessions"]
    assert len(row["key_actions"]) == 10
    assert row["key_actions"][1] == "prompt number 0"  # the title, the first prompt, the latest
    assert row["key_actions"][-1] == "prompt number 14"
    assert all(len(a) <= 256 for a in row["key_actions"])
    assert len(row["files_touched"]) == 50 and row["files_touched"][0] == "f0.py"


def test_fork_lines_inherited_from_an_ancestor_stay_with_the_ancestor(tmp_path: Path) -> None:
    parent = lines(prompt(1, "parent prompt", sid="p"), prompt(2, "parent second", sid="p"))
    fork = parent + lines(prompt(3, "fork prompt", sid="f", timestamp="2026-06-05T10:00:00Z"))
    folder = tmp_path / ".claude" / "projects" / "-w-proj"
    folder.mkdir(parents=True)
    (folder / "p.jsonl").write_bytes(parent)
    (folder / "f.jsonl").write_bytes(fork)
    rows = {s["session_id"]: s for s in read(tmp_path).manifest["recent_sessions"]}
    assert rows["p"]["key_actions"] == ["parent prompt", "parent second"]
    assert rows["f"]["key_actions"] == ["fork prompt"]
    assert rows["f"]["date"] == "2026-06-05"


# -- locations and health -------------------------------------------------------------------


def test_config_dir_env_and_xdg_locations(tmp_path: Path) -> None:
    custom = tmp_path / "custom-claude"
    folder = custom / "projects" / "-w"
    folder.mkdir(parents=True)
    (folder / "s9.jsonl").write_bytes(lines(prompt(1, "from the env store", sid="s9")))
    result = READER.read(
        ReaderContext(home=tmp_path, tz=PARIS, env={"CLAUDE_CONFIG_DIR": str(custom)})
    )
    assert actions(result) == ["from the env store"]
    xdg = tmp_path / "xdg"
    assert (
        READER.locations(ReaderContext(home=tmp_path, env={"XDG_CONFIG_HOME": str(xdg)}))[1]
        == xdg / "claude"
    )


def test_health_says_where_it_looked(tmp_path: Path) -> None:
    missing = READER.health(ReaderContext(home=tmp_path))
    assert not missing.ok and "CLAUDE_CONFIG_DIR" in (missing.fix or "")
    (tmp_path / ".claude").mkdir()
    assert READER.health(ReaderContext(home=tmp_path)).ok


def test_the_reader_is_registered() -> None:
    readers, _ = load_readers()
    assert isinstance(readers["claude-code"], ClaudeCodeReader)
    assert (READER.name, READER.agent_type, READER.store_env) == (
        "claude-code",
        "code-assistant",
        "CLAUDE_CONFIG_DIR",
    )


# -- acceptance: a live writer ------------------------------------------------------------------


def checksum(n: int) -> str:
    return hashlib.sha256(f"record-{n}".encode()).hexdigest()[:12]


def test_polling_while_a_writer_appends_never_emits_a_partial_record(tmp_path: Path) -> None:
    """A writer appends, every third record in two write() calls with a poll in between, while
    the reader polls 1,000 times: no exception, and every key action and file is whole."""
    root = tmp_path / ".claude"
    folder = root / "projects" / "-w-live"
    folder.mkdir(parents=True)
    stop = threading.Event()
    polls = [0]
    written = [0]

    def writer() -> None:
        n = 0
        while not stop.is_set() and n < 100:
            path = folder / f"live{n // 25:03d}.jsonl"
            text = f"chk {n} {checksum(n)}"
            use = {
                "type": "tool_use",
                "id": f"t{n}",
                "name": "Edit",
                "input": {"file_path": f"/w/live/f{n}_{checksum(n)}.py"},
            }
            edit = record("assistant", n, cwd="/w/live", sid=path.stem, message={"content": [use]})
            data = lines(prompt(n, text, cwd="/w/live", sid=path.stem), edit | {"uuid": f"a{n}"})
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                if n % 3 == 1:
                    cut = 1 + (n * 7919) % (len(data) - 1)
                    os.write(fd, data[:cut])
                    seen, deadline = polls[0], time.monotonic() + 1.0
                    while polls[0] < seen + 2 and time.monotonic() < deadline and not stop.is_set():
                        time.sleep(0.0005)  # let at least one whole poll see the torn line
                    os.write(fd, data[cut:])
                else:
                    os.write(fd, data)
            finally:
                os.close(fd)
            n += 1
            written[0] = n
            time.sleep(0.005)

    thread = threading.Thread(target=writer)
    thread.start()
    pattern = re.compile(r"^chk (\d+) ([0-9a-f]{12})$")
    file_pattern = re.compile(r"^f(\d+)_([0-9a-f]{12})\.py$")
    seen_actions = torn = 0
    try:
        for _ in range(1000):
            result = READER.read(ReaderContext(home=tmp_path, tz=PARIS, store=root))
            polls[0] += 1
            torn += result.stats.partial_tail
            for row in result.manifest["recent_sessions"]:
                for action in row.get("key_actions", []):
                    match = pattern.match(action)
                    assert match and checksum(int(match.group(1))) == match.group(2), action
                    seen_actions += 1
                for name in row.get("files_touched", []):
                    match = file_pattern.match(name)
                    assert match and checksum(int(match.group(1))) == match.group(2), name
    finally:
        stop.set()
        thread.join()
    assert seen_actions > 0 and torn > 0
    final = READER.read(ReaderContext(home=tmp_path, tz=PARIS, store=root))
    assert final.stats.partial_tail == 0
    assert len(final.manifest["recent_sessions"]) == (written[0] + 24) // 25


@pytest.mark.parametrize(
    ("path", "private"),
    [
        ("{home}/personal/diary", True),
        ("{home}/Private", True),
        ("{home}/src/personal-site", False),
        ("/home/dana/personal/x", True),
        ("/Users/dana/private", True),
        ("/srv/personal/x", False),
        ("C:\\Users\\dana\\Personal\\notes", True),
        ("C:\\Users\\dana\\src\\ledgerline", False),
        ("", False),
    ],
)
def test_the_private_path_rule(path: str, private: bool, tmp_path: Path) -> None:
    assert is_private_path(path.format(home=tmp_path), tmp_path) is private


def test_records_of_the_wrong_shape_are_survived(tmp_path: Path) -> None:
    deep = b'{"type":"user","x":' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    hostile = [
        {"type": ["user"]},
        {"type": "user", "message": "a string"},
        {"type": "user", "message": {"content": 42}},
        {"type": "user", "message": {"content": [{"type": ["x"]}, 5, None]}},
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "name": ["Write"], "input": []}]},
        },
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "name": "Write", "input": {"file_path": 7}}]
            },
        },
        {
            "type": "user",
            "cwd": ["x"],
            "timestamp": {"a": 1},
            "sessionId": 5,
            "uuid": [1],
            "toolUseResult": {"filePath": ["a"]},
        },
        {"type": "ai-title", "aiTitle": {"x": 1}},
        {"type": "summary", "leafUuid": 5, "summary": None},
        {
            "type": "user",
            "cwd": "/w/\x1b[31mproj\udc80",
            "message": {"content": "control chars in cwd"},
        },
    ]
    body = lines(*hostile) + deep + b"[1, 2]\n42\n" + lines(prompt(99, "survivor"))
    tiny_store(tmp_path, body)
    result = read(tmp_path)
    assert "survivor" in actions(result)
    assert (
        result.stats.skipped >= 4
    )  # the list type, the bad block types, the deep line, [1, 2], 42
    schema.validate(
        {"spec_version": "0.1", "last_updated": "2026-07-01T00:00:00Z", **result.manifest}
    )


def test_only_the_newest_500_sessions_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "projects" / "-w-proj"
    folder.mkdir(parents=True)
    for n in range(505):
        stamp = f"2026-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}T{n // 336:02d}:00:00Z"
        (folder / f"s{n:03d}.jsonl").write_bytes(
            lines(prompt(n, f"p{n}", sid=f"s{n:03d}", timestamp=stamp))
        )
    rows = read(tmp_path).manifest["recent_sessions"]
    assert len(rows) == 500
    dates = [r["date"] for r in rows]
    assert dates == sorted(dates, reverse=True)
    assert {"s000", "s001"}.isdisjoint(r["session_id"] for r in rows)
