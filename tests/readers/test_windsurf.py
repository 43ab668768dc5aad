"""The Windsurf (Cascade) reader: rules and memories as notes; transcripts counted, never parsed.

The store under tests/fixtures/stores/cascade was written by hand from Windsurf's documented
layout (native-stores.md section 8.1, docs.windsurf.com/windsurf/cascade/memories); the
expected notes below were written from it, not from the reader's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bourdon.formats import yamlio
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.windsurf import WindsurfReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "stores" / "cascade" / "home"
MTIME = 1775082600  # 2026-04-01 22:30 UTC: 2026-04-02 in Paris
TOKEN = "CANARY-windsurf-ghp-token-7a1c"
OPAQUE = (
    "3 Cascade conversations are stored in a format only the running Windsurf can read; "
    "bourdon reads Windsurf's memories and rules"
)

# (text, visibility, related entities) of every note.
EXPECTED = {
    (
        "Windsurf global rules:\nAnswer in British English.\n"
        "Run the tests before saying a change is done.",
        "team",
        (),
    ),
    (
        "Windsurf rule api-style (API handlers; glob: src/api/**/*.ts) for harbor:\n"
        "Validate every request body with zod.\nReturn problem+json on errors.",
        "team",
        ("harbor",),
    ),
    (
        "Windsurf rule pnpm (always on) for harbor:\nUse pnpm, never npm or yarn.",
        "team",
        ("harbor",),
    ),
    (
        "Windsurf rules (.windsurfrules) for harbor:\nThe monorepo uses pnpm workspaces.",
        "team",
        ("harbor",),
    ),
    (
        "Windsurf rules (.windsurfrules) for ledger-mac:\nLedger on the Mac: amounts are Decimal.",
        "team",
        ("ledger-mac",),
    ),
    (
        "Windsurf rule journal (Journal entries; model decision) for notes:\n"
        "Journal entries are dated in the title.",
        "private",
        ("notes",),
    ),
}


def copy_home(target: Path) -> Path:
    """The fixture home at ``target``: ``@HOME@`` replaced by it, every file's mtime fixed."""
    return install("cascade", target, folder="home", placeholder=b"@HOME@", mtime=MTIME)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(tmp_path_factory.mktemp("cascade") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return WindsurfReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_it_is_a_reader() -> None:
    reader = WindsurfReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "cascade",
        "code-assistant",
        "BOURDON_CASCADE_STORE",
    )


def test_rules_become_notes(result: ReadResult) -> None:
    notes = result.manifest["notes"]
    assert {
        (n["text"], n["visibility"], tuple(n.get("related_entities", []))) for n in notes
    } == EXPECTED
    assert {n["date"] for n in notes} == {"2026-04-02"}
    assert {t for n in notes for t in n["tags"]} == {"cascade-rule"}


def test_transcripts_and_auto_memories_are_counted_never_parsed(
    home: Path, result: ReadResult
) -> None:
    assert result.manifest["recent_sessions"] == [] and result.stats.sessions == 0
    health = WindsurfReader().health(reader_context(home))
    assert health.ok and OPAQUE in health.message
    assert "2 auto-generated memories" in health.message
    assert any(OPAQUE in p for p in result.stats.problems)
    assert not any(".pb" in n["text"] for n in result.manifest["notes"])


def test_messy_files_are_survived(result: ReadResult) -> None:
    assert result.stats.skipped == 1  # the workspace.json cut mid-write
    everything = yamlio.dump(result.manifest).decode()
    assert "wrong extension" not in everything  # README.txt is no rule
    assert TOKEN not in everything  # mcp_config.json is never read


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    WindsurfReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("cascade", result.manifest, reader="cascade")
        assert library.read("cascade").counts()["notes"] == len(EXPECTED)
    finally:
        library.close()


def test_locations_and_overrides(home: Path, tmp_path: Path) -> None:
    reader = WindsurfReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = reader.health(reader_context(empty))
    assert not missing.ok and "BOURDON_CASCADE_STORE" in (missing.fix or "")
    assert reader.read(reader_context(empty)).manifest["notes"] == []
    assert reader.locations(reader_context(empty)) == [empty / ".codeium" / "windsurf"]
    moved = reader_context(
        empty, env={"BOURDON_CASCADE_STORE": str(home / ".codeium" / "windsurf")}
    )
    texts = [n["text"] for n in reader.read(moved).manifest["notes"]]
    assert texts == [
        "Windsurf global rules:\nAnswer in British English.\nRun the tests before saying a change is done."
    ]
    watched = reader.watch_paths(reader_context(home))
    assert home / "src" / "harbor" / ".windsurf" / "rules" in watched
    assert home / "src" / "harbor" / ".windsurfrules" in watched


def test_a_store_without_transcripts_says_only_where(tmp_path: Path) -> None:
    root = tmp_path / ".codeium" / "windsurf"
    (root / "memories").mkdir(parents=True)
    health = WindsurfReader().health(reader_context(tmp_path))
    assert health.ok and "Cascade conversations" not in health.message


def test_the_private_path_rule_on_workspace_rules(tmp_path: Path) -> None:
    from tests.readers.test_private_paths import RULES

    local = [(f, p) for f, p in RULES if f.startswith("{home}")]
    wrong = []
    for n, (folder, private) in enumerate(local):
        home = tmp_path / f"h{n}"
        workspace = Path(folder.format(home=home))
        (workspace / ".windsurf" / "rules").mkdir(parents=True)
        (workspace / ".windsurf" / "rules" / "style.md").write_text("Use tabs.\n")
        slot = home / ".config" / "Windsurf" / "User" / "workspaceStorage" / "w1"
        slot.mkdir(parents=True)
        (slot / "workspace.json").write_text(f'{{"folder": "{workspace.as_uri()}"}}')
        (note,) = WindsurfReader().read(reader_context(home)).manifest["notes"]
        if note["visibility"] != ("private" if private else "team"):
            wrong.append(folder)
    assert wrong == []


def test_an_export_sees_a_changed_workspace_rule(tmp_path: Path) -> None:
    from bourdon.ingest.outcome import COMMITTED, UNCHANGED
    from bourdon.ingest.pipeline import export_reader

    home = copy_home(tmp_path / "home")
    ctx = reader_context(home)
    library = Library.init(tmp_path / "lib")
    try:
        assert export_reader(library, WindsurfReader(), ctx).outcome == COMMITTED
        assert export_reader(library, WindsurfReader(), ctx).outcome == UNCHANGED
        rule = home / "src" / "harbor" / ".windsurf" / "rules" / "pnpm.md"
        rule.write_text("---\ntrigger: always_on\n---\n\nUse pnpm 10.\n", encoding="utf-8")
        assert export_reader(library, WindsurfReader(), ctx).outcome == COMMITTED
        texts = [n["text"] for n in library.read("cascade").data["notes"]]
        assert "Windsurf rule pnpm (always on) for harbor:\nUse pnpm 10." in texts
    finally:
        library.close()


def test_odd_rule_files_and_workspace_lists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    storage = home / ".config" / "Windsurf" / "User" / "workspaceStorage"
    work = home / "src" / "odd"
    rules = work / ".windsurf" / "rules"
    rules.mkdir(parents=True)
    (rules / "latin.md").write_bytes(b"Caf\xe9 names stay in French.\n")  # not UTF-8
    (rules / "huge.md").write_text("x" * (1024 * 1024 + 1))  # over the memory-file limit
    (rules / "gone.md").symlink_to(rules / "deleted.md")  # deleted while listed
    (rules / "empty.md").write_text("---\ntrigger: manual\n---\n")  # front matter, no text
    for slot, body in {
        "a": f'{{"folder": "{work.as_uri()}"}}',
        "b": '{"folder": 42}',
        "c": '["not", "an", "object"]',
        "d": '{"workspace": "file:///x/y.code-workspace"}',
        "e": f'{{"folder": "{(home / "vanished").as_uri()}"}}',
    }.items():
        (storage / slot).mkdir(parents=True)
        (storage / slot / "workspace.json").write_text(body)
    result = WindsurfReader().read(reader_context(home))
    texts = [n["text"] for n in result.manifest["notes"]]
    assert texts == ["Windsurf rule latin for odd:\nCaf\ufffd names stay in French."]
    assert result.stats.too_large == 1
