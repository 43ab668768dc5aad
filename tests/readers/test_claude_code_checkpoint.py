"""A resumed Claude Code read gives the view a whole read of the same store gives, step after
step of random changes of the kinds a store goes through: prompts, edits, titles and cwd changes
appended to old and new sessions, new sessions (newest, and dated in the past), forks that copy
their parent's records, subagent files, legacy summaries, history lines with and without a
session, records of unknown kinds, half-written lines completed later, files rewritten shorter
and removed.

The oracle is the whole read (``read``), which takes no saved state at all. ``TAIL`` is made
small so that most steps go through the checkpoint (sessions after it combined again, the rest
restored) and some fall back to combining every session; both counts are asserted, or the
test would not be testing the checkpoint. The state goes through the pipeline's files between
steps (``ingest.resume``), so its cold part is written, named and loaded as an export does it,
and most steps take the quiet files at one look (their seal), which is counted too.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bourdon.ingest.resume import load_resume, save_resume
from bourdon.readers import claude_code
from bourdon.readers.base import ReaderContext, ReadStats
from bourdon.readers.claude_code import ClaudeCodeReader, sessions
from bourdon.readers.common import facts
from tests.support.stores.claude_code import first_timestamp, last_record, write_store

STEPS = 40


class Store:
    """The store under a home folder, and changes to it written as Claude Code writes them."""

    def __init__(self, home: Path, rng: random.Random) -> None:
        self.home = home
        self.root = home / ".claude"
        self.rng = rng
        self.clock = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

    def transcripts(self) -> list[Path]:
        found = self.root.glob("projects/*/*.jsonl")
        return sorted(p for p in found if not p.name.startswith("agent-") and last_record(p))

    def pick(self) -> Path:
        """A session's transcript: mostly one of the newest (a user works in those), else any."""
        found = self.transcripts()
        if self.rng.random() < 0.75:
            found = sorted(found, key=first_timestamp)[-sessions.TAIL :]
        return self.rng.choice(found)

    def stamp(self) -> str:
        self.clock += timedelta(minutes=7)
        return self.clock.isoformat().replace("+00:00", "Z")

    def record(self, after: dict[str, Any], kind: str, **fields: Any) -> dict[str, Any]:
        """A record of the session ``after`` is in, following it (native-stores.md 1.3)."""
        return {
            "parentUuid": after.get("uuid"),
            "isSidechain": False,
            "userType": "external",
            "cwd": after["cwd"],
            "sessionId": after["sessionId"],
            "version": "2.1.0",
            "type": kind,
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "timestamp": self.stamp(),
            **fields,
        }

    def prompt(self, after: dict[str, Any], text: str) -> dict[str, Any]:
        return self.record(after, "user", message={"role": "user", "content": text})

    def edit(self, after: dict[str, Any], path: str) -> dict[str, Any]:
        block = {
            "type": "tool_use",
            "id": f"toolu_{self.rng.getrandbits(32):08x}",
            "name": self.rng.choice(["Write", "Edit", "MultiEdit"]),
            "input": {"file_path": path, "content": "x"},
        }
        return self.record(after, "assistant", message={"role": "assistant", "content": [block]})

    def words(self) -> str:
        verbs = ["rename", "document", "test", "speed up", "split", "retry", "log"]
        things = ["the importer", "the CSV export", "the ledger API", "the bank feed", "auth"]
        return f"{self.rng.choice(verbs)} {self.rng.choice(things)} #{self.rng.randrange(10**6)}"


def append(path: Path, *records: dict[str, Any] | bytes) -> None:
    with path.open("ab") as handle:
        for record in records:
            data = record if isinstance(record, bytes) else json.dumps(record).encode() + b"\n"
            handle.write(data)


def add_prompt(s: Store) -> None:
    path = s.pick()
    append(path, s.prompt(last_record(path) or {}, s.words()))


def add_edit(s: Store) -> None:
    path = s.pick()
    after = last_record(path) or {}
    name = s.rng.choice(["src/app.py", "README.md", "src/ledger/export.py", "docs/notes.md"])
    append(path, s.edit(after, f"{after['cwd']}/{name}"))


def add_title(s: Store) -> None:
    path = s.pick()
    after = last_record(path) or {}
    kind = s.rng.choice(["custom-title", "ai-title"])
    field = "customTitle" if kind == "custom-title" else "aiTitle"
    append(path, {"type": kind, field: s.words(), "sessionId": after["sessionId"]})


def change_cwd(s: Store) -> None:
    path = s.pick()
    after = last_record(path) or {}
    moved = {**after, "cwd": str(s.home / "src" / s.rng.choice(["docs-site", "ledgerline/web"]))}
    append(path, s.prompt(moved, s.words()))


def new_session(s: Store, *, past: bool = False) -> None:
    source = s.pick()
    after = {**(last_record(source) or {}), "sessionId": str(uuid.UUID(int=s.rng.getrandbits(128)))}
    if past:  # dated before most sessions: it sorts among the old ones
        s.clock, now = datetime(2026, 3, 1, 8, 0, tzinfo=UTC), s.clock
    first = s.prompt(after, s.words())
    if past:
        s.clock = now
    append(source.parent / f"{after['sessionId']}.jsonl", first, s.prompt(first, s.words()))


def fork(s: Store) -> None:
    """A new session file that opens with a copy of its parent's records (same uuids)."""
    parent = s.pick()
    sid = str(uuid.UUID(int=s.rng.getrandbits(128)))
    copied = parent.read_bytes()
    if not copied.endswith(b"\n"):
        copied = copied[: copied.rfind(b"\n") + 1]
    after = {**(last_record(parent) or {}), "sessionId": sid}
    append(parent.parent / f"{sid}.jsonl", copied, s.prompt(after, s.words()))


def subagent(s: Store) -> None:
    path = s.pick()
    after = last_record(path) or {}
    folder = path.parent / path.stem / "subagents"
    folder.mkdir(parents=True, exist_ok=True)
    side = {**after, "isSidechain": True}
    name = after["cwd"] + "/src/helper.py"
    append(
        folder / f"agent-{s.rng.randrange(4)}.jsonl", s.prompt(side, s.words()), s.edit(side, name)
    )


def unknown_kind(s: Store) -> None:
    """A record of a type this reader does not know (a newer Claude Code's): skipped, said."""
    path = s.pick()
    after = last_record(path) or {}
    kind = s.rng.choice(["x-future-note", "x-future-task"])
    append(
        path,
        {
            "type": kind,
            "sessionId": after["sessionId"],
            "uuid": str(uuid.UUID(int=s.rng.getrandbits(128))),
        },
    )


def summary(s: Store) -> None:
    """A legacy summary naming a record of some session (maybe another file's)."""
    target = last_record(s.pick()) or {}
    append(s.pick(), {"type": "summary", "summary": s.words(), "leafUuid": target["uuid"]})


def history(s: Store) -> None:
    path = s.root / "history.jsonl"
    after = last_record(s.pick()) or {}
    sid = s.rng.choice([after["sessionId"], None, str(uuid.UUID(int=s.rng.getrandbits(128)))])
    line: dict[str, Any] = {
        "display": s.words(),
        "pastedContents": {},
        "timestamp": int(s.clock.timestamp() * 1000),
        "project": after["cwd"],
    }
    if sid:
        line["sessionId"] = sid
    append(path, line)


def half_line(s: Store) -> None:
    path = s.pick()
    whole = json.dumps(s.prompt(last_record(path) or {}, s.words())).encode() + b"\n"
    append(path, whole[: len(whole) // 2])


def complete_half_lines(s: Store) -> None:
    for path in s.root.glob("projects/*/*.jsonl"):
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data + b"\n")  # the line ends: it may not parse (counted skipped)


def rewrite_shorter(s: Store) -> None:
    path = s.pick()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: max(1, len(lines) // 2)]))


def remove(s: Store) -> None:
    s.pick().unlink()


CHANGES: list[tuple[Callable[[Store], None], int]] = [
    (add_prompt, 10),
    (add_edit, 6),
    (add_title, 2),
    (change_cwd, 2),
    (new_session, 4),
    (lambda s: new_session(s, past=True), 1),
    (fork, 2),
    (subagent, 2),
    (summary, 1),
    (unknown_kind, 1),
    (history, 3),
    (half_line, 2),
    (complete_half_lines, 2),
    (rewrite_shorter, 1),
    (remove, 1),
]


def comparable(stats: Any) -> dict[str, Any]:
    """What a reader of the stats sees, but the bytes read (a resumed read reads fewer)."""
    return {
        "records": stats.records,
        "skipped": stats.skipped,
        "too_large": stats.too_large,
        "files": stats.files,
        "sessions": stats.sessions,
        "found": stats.found_sessions,
        "problems": sorted(stats.problems),
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_resumed_reads_equal_whole_reads_through_random_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(sessions, "TAIL", 6)
    # A cap below the store's sessions: the checkpoint keeps some rows only to count them.
    monkeypatch.setattr(facts, "MAX_SESSIONS", 12)
    beyond: list[int] = []
    restore = facts.Assembler.resumed.__func__  # type: ignore[attr-defined]

    def restored(cls: type[facts.Assembler], *args: Any) -> facts.Assembler | None:
        found = restore(cls, *args)
        beyond.append(len(found._beyond) if found is not None else 0)
        return found

    monkeypatch.setattr(facts.Assembler, "resumed", classmethod(restored))
    resumed: list[bool] = []
    after = sessions.Scan.sessions_after

    def counted(self: sessions.Scan, *args: Any) -> sessions.Sessions | None:
        found = after(self, *args)
        resumed.append(found is not None)
        return found

    monkeypatch.setattr(sessions.Scan, "sessions_after", counted)
    quiet: list[bool] = []
    settle = sessions.Scan.settle

    def settled(self: sessions.Scan, *args: Any) -> None:
        settle(self, *args)
        quiet.append(self._quiet is not None)

    monkeypatch.setattr(sessions.Scan, "settle", settled)
    seals: list[bool] = []
    sealed = claude_code.sealed

    def looked(*args: Any) -> bool:
        seals.append(sealed(*args))
        return seals[-1]

    monkeypatch.setattr(claude_code, "sealed", looked)
    home = tmp_path / "home"
    write_store(home, seed=seed, sessions=40)
    ctx = ReaderContext(home=home, env={}, tz=UTC, machine="laptop")
    reader = ClaudeCodeReader()
    store = Store(home, random.Random(seed))
    kept = tmp_path / "library"  # the state kept as the pipeline keeps it, cold part apart
    save_resume(kept, "claude-code", reader.read(ctx).resume)
    changes, weights = zip(*CHANGES, strict=True)
    for step in range(STEPS):
        change = store.rng.choices(changes, weights)[0]
        change(store)
        state = load_resume(kept, "claude-code")
        got = reader.read_from(ctx, state)
        whole = reader.read(ctx)
        name = getattr(change, "__name__", "new_session")
        assert got.manifest == whole.manifest, f"step {step}: {name}"
        assert comparable(got.stats) == comparable(whole.stats), f"step {step}: {name}"
        save_resume(kept, "claude-code", got.resume, state)
    # Both ways were taken: most steps resumed from the checkpoint, some combined all again.
    assert sum(resumed) >= STEPS // 3, resumed
    assert not all(resumed), resumed
    # And the files of the sessions before the checkpoint were mostly left quiet.
    assert sum(quiet) >= STEPS // 4, quiet
    # The rows the checkpoint's cap left out were counted from their keys alone.
    assert sum(1 for n in beyond if n) >= STEPS // 3, beyond
    # Most often at one look (the seal), without loading their saved entries at all.
    assert sum(seals) >= STEPS // 3, seals


def test_rows_a_checkpoint_left_out_are_counted_once_each_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cap keeps 3 rows. Of the checkpoint's 6 sessions, the 3 oldest are kept as keys
    # alone; one of them repeats the key of another (two transcripts of one session in one
    # folder), and a session added after the checkpoint repeats a third one's key. What the
    # resumed assembler shows and counts is what one that saw every session shows and counts.
    monkeypatch.setattr(facts, "MAX_SESSIONS", 3)
    ctx = ReaderContext(home=tmp_path, env={}, tz=UTC, machine="laptop")
    cwd = str(tmp_path / "src" / "app")

    def session(sid: str, day: int, prompt: str) -> facts.SessionFacts:
        found = facts.SessionFacts(sid, start=datetime(2026, 5, day, 9, tzinfo=UTC))
        found.see_cwd(cwd)
        found.prompts.append(prompt)
        return found

    before = [
        session("s1", 1, "first"),
        session("s1", 1, "first, again"),  # the same key as the one above
        session("s2", 2, "second"),
        session("s3", 3, "third"),
        session("s4", 4, "fourth"),
        session("s5", 5, "fifth"),
    ]
    after = [session("s2", 2, "second, from elsewhere"), session("s6", 6, "sixth")]
    whole = facts.Assembler(ctx)
    for each in before + after:
        whole.add_session(each)
    taken = facts.Assembler(ctx)
    for each in before:
        taken.add_session(each)
    saved = json.loads(json.dumps(taken.checkpoint()))
    assert len(saved["sessions"]) == 3 and len(saved["beyond"]) == 2
    resumed = facts.Assembler.resumed(ctx, saved)
    assert resumed is not None
    for each in after:
        resumed.add_session(each)
    stats, expected = ReadStats(), ReadStats()
    assert resumed.manifest("claude-code", "code-assistant", stats) == whole.manifest(
        "claude-code", "code-assistant", expected
    )
    assert (stats.found_sessions, stats.sessions) == (expected.found_sessions, 3)
    assert expected.found_sessions == 6  # s1 to s6, each once
