"""The Kilo Code reader: the extension's task folders in every editor, the legacy CLI's, rules.

Expectations written by hand from the fixture store (tests/fixtures/stores/kilo-code/) and the
format facts in the reader's docstring, before the reader was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers.base import Reader, ReadResult
from bourdon.readers.kilo_code import KiloCodeReader
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context, snapshot
from tests.support.stores.fixture import install


def session(result: ReadResult, sid: str) -> dict[str, Any]:
    (row,) = [s for s in result.manifest["recent_sessions"] if s.get("session_id") == sid]
    return row


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install("kilo-code", tmp_path_factory.mktemp("kilo") / "home")


@pytest.fixture(scope="module")
def result(home: Path) -> ReadResult:
    return KiloCodeReader().read(reader_context(home))


def test_the_reader_protocol() -> None:
    reader = KiloCodeReader()
    assert isinstance(reader, Reader)
    assert (reader.name, reader.agent_type, reader.store_env) == (
        "kilo-code",
        "code-assistant",
        "BOURDON_KILO_CODE_STORE",
    )


def test_sessions_of_every_kilo_store_and_only_kilo(result: ReadResult) -> None:
    ids = [s["session_id"] for s in result.manifest["recent_sessions"]]
    assert ids == ["1776420000000", "1776330000000", "1776205800000"]
    assert {t for s in result.manifest["recent_sessions"] for t in s["tags"]} == {"kilo-code"}
    everything = yamlio.dump(result.manifest).decode()
    for absent in ("ROO TASK", "NEW KILO SESSION", "CANARY-kilo-token"):
        assert absent not in everything, absent


def test_a_kilo_task(home: Path, result: ReadResult) -> None:
    report = session(result, "1776205800000")
    assert report["date"] == "2026-04-15"
    assert report["cwd"] == f"{home}/src/ledgerline"
    assert report["key_actions"] == ["Add a monthly report command", "Also add a test"]
    assert report["files_touched"] == [
        "ledgerline/report.py",
        "tests/test_report.py",
        "ledgerline/cli.py",
    ]


def test_messy_and_other_hosts(home: Path, result: ReadResult) -> None:
    assert result.stats.skipped == 1  # VSCodium's ui_messages.json, cut mid-write
    pnpm = session(result, "1776330000000")  # from the API history alone
    assert pnpm["key_actions"] == ["Switch the monorepo to pnpm workspaces"]
    assert pnpm["cwd"] == f"{home}/src/harbor" and pnpm["date"] == "2026-04-16"
    assert pnpm["files_touched"] == ["pnpm-workspace.yaml"]
    legacy_cli = session(result, "1776420000000")
    assert legacy_cli["cwd"] == f"{home}/private/health"
    assert legacy_cli["visibility"] == "private" and legacy_cli["files_touched"] == ["running.py"]


def test_kilo_rules_become_notes(result: ReadResult) -> None:
    notes = {n["text"]: n for n in result.manifest["notes"]}
    assert set(notes) == {
        "Kilo rule style:\nAnswer briefly.",
        "Kilo rule packages for harbor:\nUse pnpm, never npm or yarn.",
        "Kilo rule .kilocoderules for ledgerline:\nAmounts are Decimal, never float.",
    }
    assert {tuple(n["tags"]) for n in notes.values()} == {("kilo-rule",)}


def test_health_names_the_store_it_cannot_read(home: Path, tmp_path: Path) -> None:
    reader = KiloCodeReader()
    assert reader.health(reader_context(home)).ok
    newer = tmp_path / "newer"
    (newer / ".local" / "share" / "kilo" / "storage").mkdir(parents=True)
    health = reader.health(reader_context(newer))
    assert not health.ok
    assert "Kilo CLI 1.0" in health.message and str(newer / ".local/share/kilo") in health.message
    assert reader.read(reader_context(newer)).manifest["recent_sessions"] == []


def test_the_store_is_never_written(home: Path) -> None:
    before = snapshot(home)
    KiloCodeReader().read(reader_context(home))
    assert snapshot(home) == before


def test_output_commits_into_a_library(result: ReadResult, tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    try:
        library.regenerate("kilo-code", result.manifest, reader="kilo-code")
        assert library.read("kilo-code").counts()["recent_sessions"] == 3
    finally:
        library.close()


def test_locations_and_overrides(tmp_path: Path, home: Path) -> None:
    reader = KiloCodeReader()
    empty = tmp_path / "empty"
    empty.mkdir()
    places = reader.locations(reader_context(empty))
    assert empty / ".kilocode" / "cli" / "global" in places
    assert (
        empty / ".config" / "Windsurf" / "User" / "globalStorage" / "kilocode.kilo-code" in places
    )
    assert not any("roo-cline" in str(p) or "claude-dev" in str(p) for p in places)
    legacy = home / ".kilocode" / "cli" / "global"
    only = reader.read(reader_context(empty, env={"BOURDON_KILO_CODE_STORE": str(legacy)}))
    assert [s["session_id"] for s in only.manifest["recent_sessions"]] == ["1776420000000"]
