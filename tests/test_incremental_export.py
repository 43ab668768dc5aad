"""Incremental export of a Claude Code store: what was appended is read, and only that.

Each test exports a generated store (``tests.support.stores.claude_code``), changes it the way
Claude Code does (or the way a sweep or an editor would), exports again from the saved resume
state, and compares the library's rows with those of a second library that read the whole store
(``--force``, no state). ``read.bytes_read`` shows what the resumed read had to read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bourdon import __version__
from bourdon.cli.main import main
from bourdon.ingest.hookrun import hook_export
from bourdon.ingest.outcome import COMMITTED, UNCHANGED
from bourdon.ingest.pipeline import check, export_reader
from bourdon.ingest.resume import cold_path, load_resume, resume_path, save_resume
from bourdon.model import AGENTS_DIR, ROW_SECTIONS, SUFFIX
from bourdon.readers.base import ReaderContext
from bourdon.readers.claude_code import ClaudeCodeReader, sessions
from bourdon.store.library import Library
from tests.support.stores.claude_code import first_timestamp, write_store

READER = ClaudeCodeReader()


@pytest.fixture
def home(isolated_home: Path) -> Path:
    write_store(isolated_home, sessions=12)
    return isolated_home


@pytest.fixture
def ctx(home: Path) -> ReaderContext:
    return ReaderContext(home=home, machine="test-box")


@pytest.fixture
def libraries(tmp_path: Path) -> Iterator[tuple[Library, Library]]:
    """The library exported incrementally, and one that reads the whole store every time."""
    resumed, whole = Library.init(tmp_path / "resumed"), Library.init(tmp_path / "whole")
    yield resumed, whole
    resumed.close()
    whole.close()


def rows(library: Library) -> dict[str, Any]:
    data = library.read("claude-code").data
    return {section: data.get(section) for section in ROW_SECTIONS}


def export_both(libraries: tuple[Library, Library], ctx: ReaderContext) -> dict[str, Any]:
    """Export into both libraries; the resumed export's result (as ``--json`` gives it)."""
    resumed, whole = libraries
    result = export_reader(resumed, READER, ctx)
    export_reader(whole, READER, ctx, force=True)
    assert rows(resumed) == rows(whole)
    return result.to_dict()


def transcripts(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


def tails(home: Path) -> int:
    """The bytes of the unfinished last lines (no newline yet): every read reads them again."""
    total = 0
    for root in (home / ".claude", home / ".config" / "claude"):
        for p in [*root.rglob("*.jsonl")]:
            data = p.read_bytes()
            if data and not data.endswith(b"\n") and ("projects" in p.parts or p.parent == root):
                total += len(data) - (data.rfind(b"\n") + 1)
    return total


def jsonl_bytes(home: Path) -> int:
    """The size of every transcript and prompt history (of both stores): what a whole read reads."""
    total = 0
    for root in (home / ".claude", home / ".config" / "claude"):
        total += sum(p.stat().st_size for p in root.rglob("*.jsonl") if "projects" in p.parts)
        if (root / "history.jsonl").exists():
            total += (root / "history.jsonl").stat().st_size
    return total


def session_file(home: Path) -> Path:
    """The transcript of an ordinary session of ledgerline (the first project), with prompts."""
    for path in transcripts(home):
        text = path.read_text(encoding="utf-8", errors="replace")
        ordinary = text.startswith('{"type": "permission-mode", "permissionMode": "default"')
        if ordinary and path.parent.name.endswith("-src-ledgerline"):
            return path
    raise AssertionError("no ledgerline session in the generated store")


def record(path: Path, text: str, n: int = 1, *, sid: str | None = None) -> bytes:
    """A user prompt line for the session of ``path`` (or ``sid``), as Claude Code appends it."""
    cwd = next(r["cwd"] for r in map(json.loads, path.read_bytes().splitlines()) if "cwd" in r)
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": "2026-06-30T17:00:00.000Z",
        "cwd": cwd,
        "sessionId": sid or path.stem,
    }
    return json.dumps(line).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def key_actions(library: Library, sid: str) -> list[str]:
    for row in library.read("claude-code").rows("recent_sessions"):
        if row.get("session_id") == sid:
            return list(row.get("key_actions") or [])
    return []


def test_a_line_appended_to_a_session_is_all_that_is_read(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    first = export_both(libraries, ctx)
    assert first["outcome"] == COMMITTED
    assert first["read"]["bytes_read"] == jsonl_bytes(home)  # the whole store, the first time
    path = session_file(home)
    line = record(path, "Rename the importer module to bank_csv")
    append(path, line)
    second = export_both(libraries, ctx)
    assert second["outcome"] == COMMITTED
    assert second["read"]["bytes_read"] == len(line) + tails(home)
    assert "Rename the importer module to bank_csv" in key_actions(libraries[0], path.stem)
    assert export_reader(libraries[0], READER, ctx).outcome == UNCHANGED


def test_a_new_session_file_is_read_whole_and_the_others_not_at_all(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    model = session_file(home)
    new = model.with_name("5b0c7a52-1d2e-4f3a-9b8c-7d6e5f4a3b2c.jsonl")
    data = record(model, "Start the quarterly report script", 1, sid=new.stem)
    data += record(model, "Add a chart", 2, sid=new.stem)
    new.write_bytes(data)
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == len(data) + tails(home)
    assert key_actions(libraries[0], new.stem) == [
        "Start the quarterly report script",
        "Add a chart",
    ]


def test_an_unfinished_last_line_is_read_again_once_it_is_finished(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    before = export_both(libraries, ctx)["read"]["partial_tail"]  # the store has one already
    path = session_file(home)
    line = record(path, "Explain the rounding in the March report", 7)
    append(path, line[:40])  # Claude Code is writing it
    half = export_both(libraries, ctx)
    assert half["read"]["partial_tail"] == before + 1
    assert "Explain the rounding in the March report" not in key_actions(libraries[0], path.stem)
    append(path, line[40:])
    done = export_both(libraries, ctx)
    # From the start of the unfinished line (and the store's other unfinished lines).
    assert done["read"]["bytes_read"] == len(line) + tails(home)
    assert done["read"]["partial_tail"] == before
    assert "Explain the rounding in the March report" in key_actions(libraries[0], path.stem)


def test_an_unterminated_last_line_that_parses_counts_now_and_once(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    path = session_file(home)
    line = record(path, "Bump the version to 0.4.0", 8)
    append(path, line.rstrip(b"\n"))  # a complete record, its newline not written yet
    export_both(libraries, ctx)
    assert key_actions(libraries[0], path.stem).count("Bump the version to 0.4.0") == 1
    append(path, b"\n" + record(path, "Tag the release", 9))
    export_both(libraries, ctx)
    actions = key_actions(libraries[0], path.stem)
    assert actions.count("Bump the version to 0.4.0") == 1 and "Tag the release" in actions


def test_a_rewritten_or_shrunk_file_is_read_whole(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    path = session_file(home)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))  # shorter than where the read stopped
    shrunk = export_both(libraries, ctx)
    assert shrunk["read"]["bytes_read"] == path.stat().st_size + tails(home)
    # Same size and longer, but other first bytes: an editor's rewrite, not an append.
    original = path.read_bytes()
    changed = original.replace(b'"default"', b'"dEfault"', 1)
    path.write_bytes(changed + record(path, "Drop the legacy importer", 3))
    rewritten = export_both(libraries, ctx)
    assert rewritten["read"]["bytes_read"] == path.stat().st_size + tails(home)
    assert "Drop the legacy importer" in key_actions(libraries[0], path.stem)


def test_a_replaced_file_and_a_vanished_file(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    path = session_file(home)
    # Replaced by a new file (a new inode) holding the same bytes and one more line.
    data = path.read_bytes() + record(path, "Check the new inode", 4)
    path.with_suffix(".tmp").write_bytes(data)  # written beside, then renamed over it
    path.with_suffix(".tmp").replace(path)
    replaced = export_both(libraries, ctx)
    assert replaced["read"]["bytes_read"] == len(data) + tails(home)
    gone = transcripts(home)[-1]
    sid = gone.stem
    gone.unlink()  # the 30-day sweep
    export_both(libraries, ctx)
    assert key_actions(libraries[0], sid) == []
    saved = load_resume(libraries[0].root, "claude-code")
    assert saved is not None and str(gone) not in saved["files"]


def header(schema: int, reader: str, version: str = __version__) -> bytes:
    state = {"schema": schema, "reader": reader}
    top = {"bourdon": version, "state": state, "sections": ["files", "history"]}
    return json.dumps(top).encode() + b"\n"


@pytest.mark.parametrize(
    "state",
    [
        b"not json",
        header(999, "claude-code"),
        header(1, "codex"),
        header(1, "claude-code", "0.0.1"),
        header(1, "claude-code") + b'["files", "x", [1, 2]]\n["history", "y", 3]\n',
    ],
    ids=["garbled", "another schema", "another reader", "another bourdon", "wrong shapes"],
)
def test_a_state_from_elsewhere_means_a_whole_read(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library], state: bytes
) -> None:
    export_both(libraries, ctx)
    target = resume_path(libraries[0].root, "claude-code")
    target.write_bytes(state)
    path = session_file(home)
    append(path, record(path, "Read it all again", 5))
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == jsonl_bytes(home)


def test_a_garbled_entry_of_one_file_rereads_that_file_only(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    state = load_resume(libraries[0].root, "claude-code")
    assert state is not None
    path = session_file(home)
    state["files"][str(path)] = [state["files"][str(path)][0], ["not", "a", "part"]]
    save_resume(libraries[0].root, "claude-code", state, state)
    append(path, record(path, "One file again", 6))
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == path.stat().st_size + tails(home)


@pytest.mark.parametrize(
    "body",
    ["not json", "[1, 2]", '[null, null, [], null, null, [], [["k", 7, null]], [], ""]'],
    ids=["not json", "too short", "a prompt that is not text"],
)
def test_a_garbled_body_found_when_its_file_grew_means_a_whole_read(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library], body: str
) -> None:
    export_both(libraries, ctx)
    state = load_resume(libraries[0].root, "claude-code")
    assert state is not None
    path = session_file(home)
    state["bodies"][str(path)] = body
    save_resume(libraries[0].root, "claude-code", state, state)
    append(path, record(path, "Parse it all again", 8))
    result = export_both(libraries, ctx)  # the rows equal a whole read's
    assert result["read"]["bytes_read"] == jsonl_bytes(home)
    assert "Parse it all again" in str(rows(libraries[0]))


@pytest.mark.parametrize(
    "point",
    ["{", '{"signature": 1}', "[]", None],
    ids=["not json", "missing parts", "another shape", "not a string"],
)
def test_a_garbled_checkpoint_means_every_session_is_combined_again(
    home: Path,
    ctx: ReaderContext,
    libraries: tuple[Library, Library],
    point: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sessions, "TAIL", 4)  # the store's 12 sessions leave some before it
    export_both(libraries, ctx)
    state = load_resume(libraries[0].root, "claude-code")
    assert state is not None and state["point"], "a checkpoint was taken"
    state["point"]["sessions"] = point
    save_resume(libraries[0].root, "claude-code", state, state)
    path = session_file(home)
    append(path, record(path, "Combine them all", 9))
    export_both(libraries, ctx)  # the rows equal a whole read's
    assert "Combine them all" in str(rows(libraries[0]))
    again = load_resume(libraries[0].root, "claude-code")
    assert again is not None
    kept = again["point"].get("sessions")  # none, or a new one: never the garbled one again
    assert kept is None or isinstance(json.loads(kept), dict)


def test_history_lines_of_swept_sessions_are_read_as_appended(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    history = home / ".claude" / "history.jsonl"
    line = (
        json.dumps(
            {
                "display": "Plan the terraform state migration",
                "pastedContents": {},
                "timestamp": 1751000000000,
                "project": str(home / "src" / "infra-terraform"),
                "sessionId": "9a8b7c6d-0000-4000-8000-000000000001",
            }
        ).encode()
        + b"\n"
    )
    append(history, line)
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == len(line) + tails(home)
    assert key_actions(libraries[0], "9a8b7c6d-0000-4000-8000-000000000001") == [
        "Plan the terraform state migration"
    ]


def test_dry_run_and_force_leave_no_state_behind_or_ignore_it(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    resumed = libraries[0]
    export_reader(resumed, READER, ctx, dry_run=True)
    assert not resume_path(resumed.root, "claude-code").exists()
    export_reader(resumed, READER, ctx)
    before = resume_path(resumed.root, "claude-code").stat().st_mtime_ns
    forced = export_reader(resumed, READER, ctx, force=True)
    assert forced.stats is not None and forced.stats.bytes_read == jsonl_bytes(home)
    assert resume_path(resumed.root, "claude-code").stat().st_mtime_ns >= before


def written(library: Library) -> bytes:
    """The manifest file as written, without its ``last_updated`` line (the time of writing)."""
    data = (library.root / AGENTS_DIR / f"claude-code{SUFFIX}").read_bytes()
    return b"".join(line for line in data.splitlines(True) if not line.startswith(b"last_updated:"))


def test_two_appends_between_exports_are_both_read_and_written_as_a_whole_read_writes(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    path = session_file(home)
    first, second = record(path, "First of two", 10), record(path, "Second of two", 11)
    append(path, first)
    append(path, second)
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == len(first) + len(second) + tails(home)
    assert key_actions(libraries[0], path.stem)[-2:] == ["First of two", "Second of two"]
    # The library kept open reuses the text of unchanged rows: byte for byte what is written
    # from scratch.
    assert written(libraries[0]) == written(libraries[1])


def test_a_secret_is_redacted_and_counted_on_every_export_not_only_the_first(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    before = export_both(libraries, ctx)["redacted"]
    expected = {**before, "github-token": before.get("github-token", 0) + 1}
    path = session_file(home)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    append(path, record(path, f"Use the token {token} for the release", 15))
    assert export_both(libraries, ctx)["redacted"] == expected
    assert token not in json.dumps(rows(libraries[0]))
    append(path, record(path, "Tag the release", 16))
    # The row with the secret changed again (a newer prompt): redacted again, counted once.
    assert export_both(libraries, ctx)["redacted"] == expected
    other = next(p for p in transcripts(home) if p != path)
    append(other, record(other, "Unrelated prompt", 17))
    # That row did not change this time: taken as it was redacted, and still counted.
    assert export_both(libraries, ctx)["redacted"] == expected
    assert token not in json.dumps(rows(libraries[0]))


def test_a_state_cut_short_means_a_whole_read_and_the_same_rows(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    target = resume_path(libraries[0].root, "claude-code")
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])  # a disk that filled up mid-write
    path = session_file(home)
    append(path, record(path, "After the cut", 12))
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == jsonl_bytes(home)
    assert "After the cut" in key_actions(libraries[0], path.stem)


def test_the_hooks_export_after_an_append_equals_a_whole_read(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    export_both(libraries, ctx)
    resumed, whole = libraries
    path = session_file(home)
    append(path, record(path, "Export from the hook", 13))
    hook_export(resumed.root, READER, ctx, {}, lambda: Library.open(resumed.root))
    export_reader(whole, READER, ctx, force=True)
    assert rows(resumed) == rows(whole)
    assert "Export from the hook" in key_actions(resumed, path.stem)
    assert written(resumed) == written(whole)


def test_a_file_written_after_the_store_was_looked_at_is_read_by_the_next_export(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    resumed = libraries[0]
    export_both(libraries, ctx)
    path = session_file(home)
    append(path, record(path, "Look at the store", 14))
    quick, seen = check(resumed.root, READER, ctx)
    assert quick is None and seen is not None
    new = path.with_name("7d2e9c74-2e3f-4a5b-8c9d-0e1f2a3b4c5d.jsonl")
    new.write_bytes(record(path, "Written in between", 1, sid=new.stem))
    # The export reads the store as it was looked at: the new file is for the next one.
    export_reader(resumed, READER, ctx, seen=seen)
    assert "Look at the store" in key_actions(resumed, path.stem)
    assert key_actions(resumed, new.stem) == []
    export_both(libraries, ctx)
    assert key_actions(resumed, new.stem) == ["Written in between"]


# -- the session cap, in the text outputs -----------------------------------------------------


@pytest.fixture
def crowded(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with more sessions than the cap keeps, and a library; the CLI's environment."""
    write_store(isolated_home, sessions=520)
    library = tmp_path / "lib"
    Library.init(library).close()
    monkeypatch.setenv("HOME", str(isolated_home))
    monkeypatch.setenv("BOURDON_LIBRARY", str(library))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers",
        lambda only=None: ({"claude-code": READER}, []),
    )
    return library


def found_sessions(home: Path) -> int:
    ctx = ReaderContext(home=home, machine="x")
    stats = READER.read(ctx).stats
    return stats.found_sessions


def test_export_says_how_many_sessions_the_cap_left_out(
    crowded: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = found_sessions(isolated_home)
    assert found > 520  # the ordinary sessions, the messy ones, the swept ones
    assert main(["export", "claude-code"]) == 0
    out = capsys.readouterr().out
    dropped = found - 500
    assert (
        f"kept the 500 newest sessions of {found:,}; {dropped:,} older ones left out: "
        "the cap keeps manifests small"
    ) in out
    assert main(["export", "claude-code", "--json", "--force"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["capped"] == {
        "sessions_found": found,
        "sessions_kept": 500,
        "sessions_dropped": dropped,
    }
    assert main(["readers"]) == 0
    assert f"claude-code: kept the 500 newest sessions of {found:,};" in capsys.readouterr().out


def test_export_all_says_it_too_and_one_left_out_is_one_session(
    crowded: Path,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The messy and swept sessions come on top of the ordinary ones: 501 sessions in all.
    extra = found_sessions(isolated_home) - 520
    other = tmp_path / "other-home"
    write_store(other, sessions=501 - extra)
    assert found_sessions(other) == 501
    monkeypatch.setenv("HOME", str(other))
    assert main(["export-all"]) == 0
    out = capsys.readouterr().out
    assert "1 older session left out by the cap" in out
    assert (
        "claude-code: kept the 500 newest sessions of 501; 1 older one left out: "
        "the cap keeps manifests small"
    ) in out


def test_no_word_about_the_cap_when_it_left_nothing_out(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "lib"
    Library.init(library).close()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BOURDON_LIBRARY", str(library))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers",
        lambda only=None: ({"claude-code": READER}, []),
    )
    assert main(["export", "claude-code", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["capped"] is None
    assert main(["export", "claude-code", "--force"]) == 0
    assert "cap" not in capsys.readouterr().out


def test_an_old_session_an_append_makes_one_of_the_newest_joins_the_view(
    isolated_home: Path, tmp_path: Path
) -> None:
    write_store(isolated_home, sessions=520)
    ctx = ReaderContext(home=isolated_home, machine="test-box")
    libraries = (Library.init(tmp_path / "resumed"), Library.init(tmp_path / "whole"))
    try:
        model = session_file(isolated_home)
        new = model.with_name("6c1d8b63-0f1e-4d2c-9b3a-8e7f6d5c4b3a.jsonl")
        # A session with a title and no timestamp yet: dated last, so past the cap.
        title = {"type": "custom-title", "customTitle": "Untimed spike", "sessionId": new.stem}
        new.write_bytes(json.dumps(title).encode() + b"\n")
        first = export_both(libraries, ctx)
        assert first["capped"]["sessions_dropped"] > 0
        sessions = libraries[0].read("claude-code").rows("recent_sessions")
        assert new.stem not in {row.get("session_id") for row in sessions}
        append(new, record(model, "Time the spike now", 7, sid=new.stem))  # the newest date
        export_both(libraries, ctx)
        assert key_actions(libraries[0], new.stem) == ["Untimed spike", "Time the spike now"]
    finally:
        for library in libraries:
            library.close()


def test_a_state_that_cannot_be_saved_fails_the_export_after_its_commit(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library]
) -> None:
    # The state is saved while the view is committed: its failure is not lost in that thread.
    resumed, _ = libraries
    export_reader(resumed, READER, ctx)
    before = len(resumed.history("claude-code", limit=None))
    folder = resume_path(resumed.root, "claude-code").parent
    for leftover in folder.iterdir():
        leftover.unlink()
    folder.rmdir()
    folder.write_text("a file where the state's folder should be\n")
    path = session_file(home)
    append(path, record(path, "Saved nowhere", 12))
    with pytest.raises(OSError):
        export_reader(resumed, READER, ctx)
    assert len(resumed.history("claude-code", limit=None)) == before + 1  # committed
    assert "Saved nowhere" in key_actions(resumed, path.stem)
    folder.unlink()
    append(path, record(path, "Saved again", 13))
    result = export_both(libraries, ctx)  # no state: a whole read, the same rows
    assert result["read"]["bytes_read"] == jsonl_bytes(home)
    assert load_resume(resumed.root, "claude-code") is not None


# -- the cold part: what was kept of the checkpoint's quiet files, in a file of its own ----------


def by_start(home: Path) -> list[Path]:
    """The top-level transcripts with a session, oldest session first."""
    found = [p for p in transcripts(home) if first_timestamp(p)]
    return sorted(found, key=first_timestamp)


def cold_file(library: Library) -> Path:
    return cold_path(library.root, "claude-code")


def looked(path: Path) -> tuple[bytes, int, int]:
    info = path.stat()
    return path.read_bytes(), info.st_mtime_ns, info.st_ino


@pytest.fixture
def checkpointed(
    home: Path,
    ctx: ReaderContext,
    libraries: tuple[Library, Library],
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """A first export whose checkpoint leaves the 4 newest of the 12 sessions after it: the
    files of the others are quiet. The cold file it wrote."""
    monkeypatch.setattr(sessions, "TAIL", 4)
    export_both(libraries, ctx)
    cold = cold_file(libraries[0])
    state = load_resume(libraries[0].root, "claude-code")
    assert state is not None and cold.exists()
    quiet = [str(p) for p in by_start(home)[:4]]  # the oldest sessions: before the checkpoint
    assert all(key in state["cold"]["files"] for key in quiet)
    assert not any(key in state["files"] for key in quiet), "kept in the cold part only"
    return cold


def test_an_append_to_a_newest_session_leaves_the_cold_file_as_it_was(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library], checkpointed: Path
) -> None:
    before = looked(checkpointed)
    path = by_start(home)[-1]
    added = record(path, "Only the newest session again", 21)
    append(path, added)
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == len(added) + tails(home)
    assert "Only the newest session again" in key_actions(libraries[0], path.stem)
    assert looked(checkpointed) == before  # neither rewritten nor replaced


def test_a_new_session_is_read_and_the_cold_file_still_left_alone(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library], checkpointed: Path
) -> None:
    before = looked(checkpointed)
    source = by_start(home)[-1]
    sid = "7d1e2f30-aaaa-4bbb-8ccc-000000000042"
    created = source.with_name(f"{sid}.jsonl")
    created.write_bytes(record(source, "A session started just now", 22, sid=sid))
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == created.stat().st_size + tails(home)
    assert key_actions(libraries[0], sid) == ["A session started just now"]
    assert looked(checkpointed) == before
    # The next append to it is read from the state's other part, as any newest session's.
    append(created, record(source, "And a second prompt", 23, sid=sid))
    export_both(libraries, ctx)
    assert key_actions(libraries[0], sid)[-1] == "And a second prompt"
    assert looked(checkpointed) == before


def test_while_an_old_session_is_worked_in_there_is_no_checkpoint_and_no_cold_file(
    home: Path, ctx: ReaderContext, libraries: tuple[Library, Library], checkpointed: Path
) -> None:
    path = by_start(home)[0]  # a quiet file
    added = record(path, "Back to the oldest session", 24)
    append(path, added)
    result = export_both(libraries, ctx)
    assert result["read"]["bytes_read"] == len(added) + tails(home)  # still no whole read
    assert "Back to the oldest session" in key_actions(libraries[0], path.stem)
    # A checkpoint would not hold while that session changes: none is kept, nor its cold part.
    assert not checkpointed.exists()
    state = load_resume(libraries[0].root, "claude-code")
    assert state is not None and "cold" not in state
    assert {str(p) for p in by_start(home)} <= state["files"].keys()


def lose(cold: Path) -> None:
    cold.unlink()


def cut_short(cold: Path) -> None:
    data = cold.read_bytes()
    cold.write_bytes(data[: len(data) // 2])


def garble(cold: Path) -> None:
    cold.write_bytes(b"not a state\n")


def emptied_bodies(cold: Path) -> None:
    """Its first line kept (the token right), every entry gone: a disk that filled up."""
    cold.write_bytes(cold.read_bytes().split(b"\n", 1)[0] + b"\n")


def another_save(cold: Path) -> None:
    """The cold file of another save, as a save cut short between its two files leaves it."""
    first, rest = cold.read_bytes().split(b"\n", 1)
    header = json.loads(first)
    header["token"] = "0" * 16
    cold.write_bytes(json.dumps(header).encode() + b"\n" + rest)


@pytest.mark.parametrize("damage", [lose, cut_short, garble, emptied_bodies, another_save])
@pytest.mark.parametrize("where", ["newest", "oldest"])
def test_a_lost_or_damaged_cold_file_costs_reading_never_a_wrong_row(
    home: Path,
    ctx: ReaderContext,
    libraries: tuple[Library, Library],
    checkpointed: Path,
    damage: Any,
    where: str,
) -> None:
    damage(checkpointed)
    # The newest: the checkpoint holds without the cold part. The oldest: every session is
    # combined again, which needs what the cold part held (read whole when it is not there).
    path = by_start(home)[-1 if where == "newest" else 0]
    added = record(path, f"After the damage, {where}", 25)
    append(path, added)
    read = export_both(libraries, ctx)["read"]["bytes_read"]  # the rows equal a whole read's
    assert key_actions(libraries[0], path.stem)[-1] == f"After the damage, {where}"
    if where == "newest":  # not needed: not missed
        assert read == len(added) + tails(home)
    else:  # the quiet files are read again
        assert read > jsonl_bytes(home) // 2
    # And the export after it resumes as usual.
    again = record(path, "Resumed again", 26)
    append(path, again)
    result = export_both(libraries, ctx)
    assert key_actions(libraries[0], path.stem)[-1] == "Resumed again"
    if where == "oldest":  # that export wrote the state anew: it reads only what was appended
        assert result["read"]["bytes_read"] == len(again) + tails(home)
