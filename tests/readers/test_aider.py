"""The Aider reader: chat histories in project folders, found by a bounded scan of the home.

The store under tests/fixtures/stores/aider was written by hand from Aider's documented
history format (native-stores.md section 7); the expected rows below were written from it,
not from the reader's output.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bourdon.formats import yamlio
from bourdon.readers.aider import AiderReader
from bourdon.readers.base import Reader, ReadResult, store_path
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install, session_view

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "stores" / "aider" / "home"
HISTORY = ".aider.chat.history.md"
MTIME = 1775082600  # 2026-04-01 22:30 UTC: 2026-04-02 in Paris

# (date, folder under the home, key actions, files touched, visibility), newest first.
EXPECTED: list[tuple[str, str, list[str], list[str], str]] = [
    (
        "2026-05-20",
        "src/inputonly",
        ["draft the changelog for 1.4"],
        [],
        "team",
    ),
    (
        "2026-05-02",
        "src/clients/acme/api",
        ["add rate limiting to the acme api client use a token bucket"],
        ["acme/client.py"],
        "team",
    ),
    (
        "2026-04-10",
        "work/harbor",
        ["switch the dev server to port 8080"],
        ["src/app.py", "docker-compose.yml"],
        "team",
    ),
    (
        "2026-03-06",
        "src/ledgerline",
        ["rename the export flag to --format", "keep --output as a hidden alias"],
        ["ledgerline/cli.py"],
        "team",
    ),
    (
        "2026-03-05",
        "src/ledgerline",
        [
            "why does the importer skip blank rows",
            "/add tests/test_importer.py docs/*.md",
            "fix the blank-row bug in the importer",
        ],
        ["tests/test_importer.py", "ledgerline/importer.py"],
        "team",
    ),
    (
        "2026-03-04",
        "src/ledgerline",
        [
            "/add ledgerline/cli.py",
            "add a --dry-run flag to the import command it should print rows instead of writing",
        ],
        ["ledgerline/cli.py"],
        "team",
    ),
    (
        "2026-02-14",
        "personal/diary",
        ["write an entry template for the diary"],
        ["template.md"],
        "private",
    ),
    (
        "2025-11-20",
        "legacy/cafe",
        ["make the caf\ufffd menu sortable by price"],
        ["menu.py"],
        "team",
    ),
]


def copy_home(target: Path) -> Path:
    """The fixture home copied to ``target``, with a symlinked project that must be skipped."""
    install("aider", target, folder="home", placeholder=b"@HOME@", mtime=MTIME)
    (target / "src" / "linked").symlink_to(target / "src" / "ledgerline")
    return target


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(tmp_path_factory.mktemp("aider") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return AiderReader().read(reader_context(home))


# -- tests --------------------------------------------------------------------------------------


def test_it_is_a_reader() -> None:
    reader = AiderReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "aider",
        "code-assistant",
        "BOURDON_AIDER_STORE",
    )


def test_sessions_as_written_by_hand(home: Path, result: ReadResult) -> None:
    rows = result.manifest["recent_sessions"]
    assert [session_view(r, home) for r in rows] == EXPECTED
    assert result.stats.sessions == len(EXPECTED)
    ids = [r["session_id"] for r in rows]
    assert len(set(ids)) == len(ids)
    again = AiderReader().read(reader_context(home))
    assert [r["session_id"] for r in again.manifest["recent_sessions"]] == ids  # stable ids


def test_the_scan_skips_hidden_vendored_deep_and_linked_folders(result: ReadResult) -> None:
    everything = yamlio.dump(result.manifest).decode()
    assert "SHOULD NOT BE READ" not in everything  # .cache, node_modules, depth 5
    assert "/src/linked" not in everything  # a symlink to a project is not followed
    assert result.stats.problems == [] or all("cap" not in p for p in result.stats.problems)


def test_messy_files_are_survived(result: ReadResult) -> None:
    # The garbage file (no header) and the input-history entry without a time.
    assert result.stats.skipped == 2
    # The empty chat file makes no session; the 0-prompt chat session was filled from the
    # input history (2026-03-06), and the input-only project made a session of its own.
    assert all(
        r.get("key_actions") or r.get("files_touched") for r in result.manifest["recent_sessions"]
    )


def test_entities_name_projects_and_files_touched_twice(result: ReadResult) -> None:
    entities = {e["name"]: e for e in result.manifest["known_entities"]}
    assert entities["ledgerline"]["type"] == "project"
    assert entities["ledgerline"]["summary"].startswith("Worked on in 3 sessions in ")
    assert entities["ledgerline"]["last_touched"] == "2026-03-06"
    cli = entities["ledgerline/ledgerline/cli.py"]
    assert (cli["type"], cli["summary"], cli["last_touched"]) == (
        "file",
        "Touched in 2 sessions.",
        "2026-03-06",
    )
    assert entities["diary"]["visibility"] == "private"


def test_conventions_named_in_aider_configs_become_notes(result: ReadResult) -> None:
    notes = {
        (n["date"], n["text"], tuple(n.get("related_entities", [])), n["visibility"])
        for n in result.manifest["notes"]
    }
    assert notes == {
        ("2026-04-02", "Aider conventions aider-global.md:\nAnswer briefly.", (), "team"),
        (
            "2026-04-02",
            "Aider conventions CONVENTIONS.md for ledgerline:\n# Conventions\n\n"
            "- Money is Decimal, never float.\n- Every command has a --dry-run.",
            ("ledgerline",),
            "team",
        ),
        (
            "2026-04-02",
            "Aider conventions docs/style.md for ledgerline:\nDocstrings in the imperative.",
            ("ledgerline",),
            "team",
        ),
        (
            "2026-04-02",
            "Aider conventions CONVENTIONS.md for harbor:\nUse pnpm.",
            ("harbor",),
            "team",
        ),
    }
    assert {t for n in result.manifest["notes"] for t in n["tags"]} == {"aider-conventions"}


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    AiderReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("aider", result.manifest, reader="aider")
        counts = library.read("aider").counts()
        assert counts["recent_sessions"] == len(EXPECTED)
    finally:
        library.close()


def test_overrides_name_projects_or_folders_of_projects(home: Path, tmp_path: Path) -> None:
    reader = AiderReader()
    one = reader.read(
        reader_context(tmp_path, env={"BOURDON_AIDER_STORE": str(home / "work" / "harbor")})
    )
    assert [r["date"] for r in one.manifest["recent_sessions"]] == ["2026-04-10"]
    several = os.pathsep.join([str(home / "work"), str(home / "legacy")])
    both = reader.read(reader_context(tmp_path, env={"BOURDON_AIDER_STORE": several}))
    assert [r["date"] for r in both.manifest["recent_sessions"]] == ["2026-04-10", "2025-11-20"]
    explicit = reader.read(reader_context(home, store=home / "personal"))
    assert [r["visibility"] for r in explicit.manifest["recent_sessions"]] == ["private"]


def test_health_and_the_fingerprinted_files(home: Path, tmp_path: Path) -> None:
    reader = AiderReader()
    ctx = reader_context(home)
    health = reader.health(ctx)
    assert health.ok and "7 Aider chat histories" in health.message
    found = {str(p.relative_to(home)) for p in reader.locations(ctx)}
    assert f"src/ledgerline/{HISTORY}" in found and "src/ledgerline/.aider.input.history" in found
    assert not any("node_modules" in p or ".cache" in p or "v2" in p for p in found)
    first = store_path(reader, ctx)
    assert first is not None and first.is_file()  # the fingerprint stats files, not the home
    watched = {str(p.relative_to(home)) for p in reader.watch_paths(ctx)}
    assert watched == found | {
        ".aider.conf.yml",
        "aider-global.md",
        "src/ledgerline/.aider.conf.yml",
        "src/ledgerline/CONVENTIONS.md",
        "src/ledgerline/docs/style.md",
        "work/harbor/.aider.conf.yml",
        "work/harbor/CONVENTIONS.md",
    }
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not reader.health(reader_context(empty)).ok
    assert reader.read(reader_context(empty)).manifest["recent_sessions"] == []


def test_the_scan_is_capped_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bourdon.readers.aider as aider

    home = tmp_path / "home"
    for n in range(30):
        (home / f"p{n:02d}").mkdir(parents=True)
    (home / "p29" / HISTORY).write_text(
        "\n# aider chat started at 2026-01-02 10:00:00\n\n#### hello  \n"
    )
    monkeypatch.setattr(aider, "MAX_FOLDERS", 10)
    result = AiderReader().read(reader_context(home))
    assert any("stopped after 10 folders" in p for p in result.stats.problems)
    assert "stopped after 10 folders" in AiderReader().health(reader_context(home)).message


def test_unreadable_and_vanished_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "gone").mkdir(parents=True)
    (home / "gone" / HISTORY).symlink_to(home / "gone" / "deleted.md")  # deleted mid-scan
    (home / "folder" / HISTORY).mkdir(parents=True)  # a folder where the file should be
    (home / "ok").mkdir()
    (home / "ok" / HISTORY).write_bytes(
        b"\n# aider chat started at 2026-01-02 10:00:00\n\n#### last line cut mid-wri"
    )
    result = AiderReader().read(reader_context(home))
    rows = result.manifest["recent_sessions"]
    assert [(r["date"], r["key_actions"]) for r in rows] == [
        ("2026-01-02", ["last line cut mid-wri"])
    ]
    assert any(HISTORY in p for p in result.stats.problems)  # the vanished one, named


def test_a_huge_history_is_skipped_with_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bourdon.readers.aider as aider

    home = tmp_path / "home"
    (home / "big").mkdir(parents=True)
    (home / "big" / HISTORY).write_text(
        "\n# aider chat started at 2026-01-02 10:00:00\n\n#### " + "x" * 5000 + "  \n"
    )
    monkeypatch.setattr(aider, "MAX_HISTORY", 1000)
    result = AiderReader().read(reader_context(home))
    assert result.stats.too_large == 1 and result.manifest["recent_sessions"] == []


def test_the_private_path_rule_on_folders_that_can_exist_here(tmp_path: Path) -> None:
    # Aider's folder is where its file lies, so only the table's folders under this home apply.
    from tests.readers.test_private_paths import RULES

    local = [(f, p) for f, p in RULES if f.startswith("{home}")]
    assert len(local) >= 6
    wrong = []
    for n, (folder, private) in enumerate(local):
        home = tmp_path / f"h{n}"
        project = Path(folder.format(home=home))
        project.mkdir(parents=True)
        (project / HISTORY).write_text(
            "\n# aider chat started at 2026-06-01 10:00:00\n\n#### tidy the importer  \n"
        )
        result = AiderReader().read(reader_context(home))
        (row,) = result.manifest["recent_sessions"]
        if row["visibility"] != ("private" if private else "team"):
            wrong.append(folder)
    assert wrong == []


def test_an_export_sees_a_new_launch_and_skips_an_unchanged_scan(tmp_path: Path) -> None:
    from bourdon.ingest.outcome import COMMITTED, UNCHANGED
    from bourdon.ingest.pipeline import export_reader

    home = copy_home(tmp_path / "home")
    ctx = reader_context(home)
    library = Library.init(tmp_path / "lib")
    try:
        first = export_reader(library, AiderReader(), ctx)
        assert first.outcome == COMMITTED and first.rows > len(EXPECTED)
        assert export_reader(library, AiderReader(), ctx).outcome == UNCHANGED
        chat = home / "work" / "harbor" / HISTORY
        with open(chat, "a", encoding="utf-8") as handle:
            handle.write(
                "\n# aider chat started at 2026-04-11 09:00:00\n\n#### add a healthcheck  \n"
            )
        again = export_reader(library, AiderReader(), ctx)
        assert again.outcome == COMMITTED
        dates = [s["date"] for s in library.read("aider").data["recent_sessions"]]
        assert "2026-04-11" in dates
    finally:
        library.close()


def test_search_blocks_name_their_file_or_nothing(tmp_path: Path) -> None:
    from bourdon.readers.aider import chat_launches
    from bourdon.readers.base import ReadStats

    chat = tmp_path / HISTORY
    chat.write_text(
        "\n# aider chat started at 2026-01-02 10:00:00\n\n#### go  \n\n"
        "Here is the change to the parser.\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n\n"
        "src/my app/main.py\n```python\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n\n"
        "```\n**lib/util.py**\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n"
    )
    (launch,) = chat_launches(chat, reader_context(tmp_path), ReadStats())
    assert launch.files == ["src/my app/main.py", "lib/util.py"]
