"""The Continue reader: ``~/.continue/sessions`` with its index, and Continue's rules files.

The store under tests/fixtures/stores/continue-dev was written by hand from Continue's types
(continuedev/continue ``core/index.d.ts``, ``core/util/history.ts``); the expected rows below
were written from it, not from the reader's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bourdon.formats import yamlio
from bourdon.readers import base
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.continue_dev import ContinueDevReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install, session_view

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "stores" / "continue-dev" / "home"
MTIME = 1775082600  # 2026-04-01 22:30 UTC: 2026-04-02 in Paris
API_KEY = "CANARY-continue-anthropic-key-sk-ant-9f3e"

# (date, folder under the home, key actions, files touched, visibility), newest first.
EXPECTED: list[tuple[str, str, list[str], list[str], str]] = [
    ("2026-04-20", "c:\\Users\\dana\\src\\infra", ["Plan the v2 API"], [], "team"),
    ("2026-03-12", "work/harbor", ["Fix flaky test"], [], "team"),
    (
        "2026-03-12",  # 23:15 UTC on the 11th
        "src/ledgerline",
        [
            "Monthly report command",
            "Add a monthly report command to the CLI",
            "Also register it in cli.py",
        ],
        ["ledgerline/report.py", "ledgerline/templates/report.html", "ledgerline/cli.py"],
        "team",
    ),
    (
        "2026-02-01",
        "personal/taxes",
        ["Receipts by category", "Sum my 2025 receipts by category"],
        ["receipts.py"],
        "private",
    ),
    (
        "2026-01-15",  # the Continue CLI: its own tool names, an untitled session
        "work/harbor",
        ["Add a healthcheck endpoint"],
        ["src/health.ts", "src/health.test.ts"],
        "team",
    ),
    ("", "work/harbor", ["Explain the build pipeline"], [], "team"),
]


def copy_home(target: Path) -> Path:
    """The fixture home at ``target``: ``@HOME@`` replaced by it, every file's mtime fixed."""
    return install("continue-dev", target, folder="home", placeholder=b"@HOME@", mtime=MTIME)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(tmp_path_factory.mktemp("continue") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return ContinueDevReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_it_is_a_reader() -> None:
    reader = ContinueDevReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "continue-dev",
        "code-assistant",
        "BOURDON_CONTINUE_DEV_STORE",
    )


def test_sessions_as_written_by_hand(home: Path, result: ReadResult) -> None:
    rows = result.manifest["recent_sessions"]
    assert [session_view(r, home) for r in rows] == EXPECTED
    assert [r["session_id"] for r in rows][:3] == [
        "9b8c7d6e-5f4a-4b3c-9d2e-1f0a9b8c7d03",
        "e4d3c2b1-a0f9-4e8d-b7c6-a5b4c3d2e104",
        "0c6f3a9e-1b2d-4e5f-8a7b-3c2d1e0f9a01",
    ]
    assert result.stats.sessions == len(EXPECTED)


def test_messy_files_are_survived(result: ReadResult) -> None:
    # The session file cut mid-write, the garbage file, a non-object entry in the index.
    assert result.stats.skipped == 3
    assert len([p for p in result.stats.problems if "not valid JSON" in p]) == 2
    everything = yamlio.dump(result.manifest).decode()
    assert "SHOULD NOT" not in everything  # cut file, context items, thinking
    assert "legacy-format-entry" not in everything and "errored.py" not in everything
    assert "canceled.py" not in everything and "models.py" not in everything  # reads are no edits


def test_rules_become_notes(home: Path, result: ReadResult) -> None:
    notes = {
        (n["text"], n["visibility"], tuple(n.get("related_entities", [])))
        for n in result.manifest["notes"]
    }
    assert notes == {
        (
            "Continue rule House style (How code is written here):\n"
            "Use type hints everywhere.\nPrefer pathlib over os.path.",
            "team",
            (),
        ),
        (
            "Continue rule Testing for ledgerline:\nEvery bug fix comes with a regression test.",
            "team",
            ("ledgerline",),
        ),
        (
            "Continue rules (.continuerules) for ledgerline:\nMoney is Decimal, never float.",
            "team",
            ("ledgerline",),
        ),
        (
            "Continue rule where for taxes:\nReceipts live in the 2025 folder.",
            "private",
            ("taxes",),
        ),
    }
    assert {n["date"] for n in result.manifest["notes"]} == {"2026-04-02"}
    assert {t for n in result.manifest["notes"] for t in n["tags"]} == {"continue-rule"}


def test_secrets_and_entities(result: ReadResult) -> None:
    assert API_KEY not in yamlio.dump(result.manifest).decode()  # config.yaml is never read
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert entities["ledgerline"]["type"] == "project"
    assert entities["harbor"]["summary"].startswith("Worked on in 3 sessions in ")
    assert entities["taxes"]["visibility"] == "private"
    assert entities["infra"]["last_touched"] == "2026-04-20"


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    ContinueDevReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("continue-dev", result.manifest, reader="continue-dev")
        counts = library.read("continue-dev").counts()
        assert counts["recent_sessions"] == len(EXPECTED)
        assert counts["notes"] == 4
    finally:
        library.close()


def test_a_huge_session_file_is_skipped_with_a_count(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "MAX_JSON_FILE", 2000)  # only the first session file is larger
    result = ContinueDevReader().read(reader_context(home))
    assert result.stats.too_large == 1
    rows = {r["session_id"]: r for r in result.manifest["recent_sessions"]}
    # The index still tells the session's title, date and folder.
    assert rows["0c6f3a9e-1b2d-4e5f-8a7b-3c2d1e0f9a01"]["key_actions"] == ["Monthly report command"]


def test_locations_and_overrides(home: Path, tmp_path: Path) -> None:
    reader = ContinueDevReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []
    assert reader.locations(reader_context(empty)) == [empty / ".continue"]
    native = reader_context(empty, env={"CONTINUE_GLOBAL_DIR": str(home / ".continue")})
    assert reader.locations(native)[0] == home / ".continue"
    assert reader.health(native).ok
    assert reader.read(native).stats.sessions == len(EXPECTED)
    moved = reader_context(empty, env={"BOURDON_CONTINUE_DEV_STORE": str(home / ".continue")})
    assert reader.read(moved).stats.sessions == len(EXPECTED)
    assert home / "src" / "ledgerline" / ".continue" / "rules" in reader.watch_paths(
        reader_context(home)
    )


def test_an_export_sees_a_changed_workspace_rule(tmp_path: Path) -> None:
    from bourdon.ingest.outcome import COMMITTED, UNCHANGED
    from bourdon.ingest.pipeline import export_reader

    home = copy_home(tmp_path / "home")
    ctx = reader_context(home)
    library = Library.init(tmp_path / "lib")
    try:
        assert export_reader(library, ContinueDevReader(), ctx).outcome == COMMITTED
        assert export_reader(library, ContinueDevReader(), ctx).outcome == UNCHANGED
        legacy = home / "src" / "ledgerline" / ".continuerules"
        legacy.write_text("Money is Decimal; rates are Decimal too.\n", encoding="utf-8")
        assert export_reader(library, ContinueDevReader(), ctx).outcome == COMMITTED
        texts = [n["text"] for n in library.read("continue-dev").data["notes"]]
        assert (
            "Continue rules (.continuerules) for ledgerline:\nMoney is Decimal; rates are Decimal too."
            in texts
        )
    finally:
        library.close()


def test_odd_sessions_and_rules(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".continue" / "sessions"
    sessions.mkdir(parents=True)
    work = home / "src" / "odd"
    (work / ".continue" / "rules").mkdir(parents=True)
    (work / ".continue" / "rules" / "latin.md").write_bytes(b"Caf\xe9 stays French.\n")
    (sessions / "sessions.json").write_bytes(b"")  # Continue rewrites an empty index as []
    (sessions / "s1.json").write_bytes(
        b'{"title": "Caf\xe9 menu", "workspaceDirectory": "'
        + str(work).encode()
        + b'", "history": [{"message": {"role": "user", "content": "sort the caf\xe9 menu"}}]}'
    )
    (sessions / "s2.json").symlink_to(sessions / "deleted.json")  # deleted while listed
    result = ContinueDevReader().read(reader_context(home))
    (row,) = result.manifest["recent_sessions"]
    assert row["date"] == "" and row["cwd"] == str(work)
    assert row["key_actions"] == ["Caf\ufffd menu", "sort the caf\ufffd menu"]
    assert [n["text"] for n in result.manifest["notes"]] == [
        "Continue rule latin for odd:\nCaf\ufffd stays French."
    ]
    assert any("s2.json" in p for p in result.stats.problems)


def test_a_rule_with_front_matter_only_is_no_note(tmp_path: Path) -> None:
    rules = tmp_path / ".continue" / "rules"
    rules.mkdir(parents=True)
    (rules / "empty.md").write_text("---\nname: Nothing yet\nalwaysApply: true\n---\n\n")
    assert ContinueDevReader().read(reader_context(tmp_path)).manifest["notes"] == []
