"""Validity and succession: rows whose valid_to passed, rows not yet valid, rows that replace
others. Reads keep returning them, marked; recognition leaves them out or presents the newer
row. Every expectation below is written by hand for the small library each test builds; the
day comes from a clock the test moves.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.access.visibility import resolve
from bourdon.formats import yamlio
from bourdon.query import reads
from bourdon.query.context import prepare_recognition_context
from bourdon.query.index import Index
from bourdon.query.mentions import recognize
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.testing import manifest


class Clock:
    """A clock that stands still until the test turns it."""

    def __init__(self, day: date) -> None:
        self.day = day

    def __call__(self) -> date:
        return self.day


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BOURDON_HOME", str(tmp_path / "home" / ".bourdon"))
    monkeypatch.setenv("BOURDON_LIBRARY", str(tmp_path / "unused-library"))


def build(tmp_path: Path, agents: dict[str, dict[str, Any]]) -> Path:
    root = tmp_path / "library"
    library = Library.init(root)
    try:
        for agent_id, sections in agents.items():
            raw = yamlio.dump(manifest(agent_id, **sections))
            library.import_manifest(raw, what=f"{agent_id}.yaml")
    finally:
        library.close()
    return root


def index_at(root: Path, clock: Clock) -> Index:
    index = Index(root, clock=clock)
    index.refresh()
    return index


def named(index: Index, prompt: str, level: str = "team") -> list[str]:
    return [m["name"] for m in recognize(index, prompt, resolve(level, False))]


ENDED = {
    "claude-code": {
        "known_entities": [
            {
                "name": "Kestrel Gateway",
                "type": "service",
                "summary": "the old ingress, retired at the end of June",
                "valid_to": "2026-06-30",
                "visibility": "team",
            },
            {
                "name": "Marigold Ledger",
                "type": "project",
                "summary": "the billing ledger",
                "visibility": "team",
            },
            {
                "name": "Quillback Search",
                "type": "service",
                "summary": "search, opening in the autumn",
                "valid_from": "2026-09-01",
                "visibility": "team",
            },
        ],
        "known_workstreams": [
            {"name": "Kestrel teardown", "status": "done", "valid_to": "2026-06-30"},
        ],
        "notes": [{"date": "2026-06-01", "text": "freeze window", "valid_to": "2026-06-15"}],
    }
}


def test_an_expired_row_is_marked_in_reads_and_left_out_of_recognition(tmp_path: Path) -> None:
    index = index_at(build(tmp_path, ENDED), Clock(date(2026, 7, 1)))
    found = reads.find_entity(index, "Kestrel Gateway", "team")["matches"]
    assert [(m["name"], m.get("expired"), m.get("valid_to")) for m in found] == [
        ("Kestrel Gateway", True, "2026-06-30")
    ]
    assert "expired" not in reads.find_entity(index, "Marigold Ledger", "team")["matches"][0]
    assert named(index, "Is Kestrel Gateway still behind the Marigold Ledger?") == [
        "Marigold Ledger"
    ]
    answer = prepare_recognition_context(index, "Kestrel Gateway outage", "team")
    assert answer["matched_entities"] == []
    assert answer["prompt_context"] == ""
    # Workstreams and notes that ended are marked the same way.
    (teardown,) = reads.list_workstreams(index, access_level="team")["workstreams"]
    assert teardown["expired"] is True
    (note,) = reads.list_notes(index, since="2026-01-01", access_level="team")["notes"]
    assert note["expired"] is True


def test_the_row_is_recognised_on_its_last_day(tmp_path: Path) -> None:
    index = index_at(build(tmp_path, ENDED), Clock(date(2026, 6, 30)))
    assert named(index, "Is Kestrel Gateway up?") == ["Kestrel Gateway"]
    assert "expired" not in reads.find_entity(index, "Kestrel Gateway", "team")["matches"][0]


def test_a_row_not_yet_valid_is_marked_and_not_recognised(tmp_path: Path) -> None:
    index = index_at(build(tmp_path, ENDED), Clock(date(2026, 8, 31)))
    (match,) = reads.find_entity(index, "Quillback Search", "team")["matches"]
    assert (match.get("not_yet_valid"), match.get("valid_from")) == (True, "2026-09-01")
    assert named(index, "wire Quillback Search into the app") == []


def test_the_day_boundary_is_honoured_while_the_index_keeps_running(tmp_path: Path) -> None:
    clock = Clock(date(2026, 6, 30))
    index = index_at(build(tmp_path, ENDED), clock)
    prompt = "Kestrel Gateway and Quillback Search"
    assert named(index, prompt) == ["Kestrel Gateway"]
    generation = index.generation
    clock.day = date(2026, 7, 1)  # midnight passes; no file changed
    # At once, before the new day's tables are made: the ended row is no longer recognised.
    assert named(index, prompt) == []
    assert reads.find_entity(index, "Kestrel Gateway", "team")["matches"][0]["expired"] is True
    assert index.refresh() is False  # waits for the new day's tables: the files did not move
    assert index.state.day == "2026-07-01"
    assert named(index, prompt) == []
    clock.day = date(2026, 9, 1)
    assert index.refresh() is False
    assert named(index, prompt) == ["Quillback Search"]
    assert index.generation == generation  # the same files: nothing was re-read


SUCCESSION = {
    "claude-code": {
        "known_entities": [
            {
                "name": "Lantern",
                "type": "project",
                "summary": "the first app",
                "visibility": "team",
            },
            {
                "name": "Orchard",
                "type": "project",
                "summary": "the app, renamed from Lantern",
                "supersedes": ["Lantern"],
                "visibility": "team",
            },
            {"name": "Tallow", "type": "project", "summary": "the old queue", "visibility": "team"},
        ]
    },
    "cursor": {
        "known_entities": [
            {"name": "Lantern", "type": "project", "summary": "app code", "visibility": "team"},
            {
                "name": "Wicklow",
                "type": "project",
                "summary": "secret successor of the queue",
                "supersedes": "Tallow",
                "visibility": "private",
            },
        ]
    },
}


def test_reads_show_the_newer_row_first_and_the_older_names_its_successor(
    tmp_path: Path,
) -> None:
    index = index_at(build(tmp_path, SUCCESSION), Clock(date(2026, 7, 1)))
    # Both named: the alias-free query "Orchard" finds only Orchard, saying what it replaces.
    (orchard,) = reads.find_entity(index, "Orchard", "team")["matches"]
    assert orchard["supersedes"] == ["Lantern"]
    (lantern,) = reads.find_entity(index, "Lantern", "team")["matches"]
    assert lantern["superseded_by"] == "Orchard"
    assert lantern["agents"] == ["claude-code", "cursor"]
    # A read that returns both puts the newer one first, whatever the match scores say.
    entities = reads.get_cross_agent_summary(index, "Lantern", "team")["entities"]
    assert [e["name"] for e in entities] == ["Lantern"]
    groups = reads.entity_view(index, "Lantern", resolve("team", False).level)
    assert groups[0]["superseded_by"] == "Orchard"


def test_recognition_presents_the_successor_for_the_older_name(tmp_path: Path) -> None:
    index = index_at(build(tmp_path, SUCCESSION), Clock(date(2026, 7, 1)))
    answer = prepare_recognition_context(index, "Ship the Lantern release", "team")
    assert [(m["name"], m.get("formerly")) for m in answer["matched_entities"]] == [
        ("Orchard", ["Lantern"])
    ]
    assert "Orchard (formerly Lantern)" in answer["prompt_context"]
    # Naming both gives one entity, the newer.
    assert named(index, "Lantern or Orchard?") == ["Orchard"]


def test_a_private_successor_never_shows_to_a_team_caller(tmp_path: Path) -> None:
    index = index_at(build(tmp_path, SUCCESSION), Clock(date(2026, 7, 1)))
    (tallow,) = reads.find_entity(index, "Tallow", "team")["matches"]
    assert "superseded_by" not in tallow
    assert named(index, "drain the Tallow queue") == ["Tallow"]
    answer = prepare_recognition_context(index, "drain the Tallow queue", "team")
    assert "Wicklow" not in repr(answer)
    # The owner, reading privately, sees the link and is presented the successor.
    (mine,) = reads.find_entity(index, "Tallow", "private", include_private=True)["matches"]
    assert mine["superseded_by"] == "Wicklow"
    assert named(index, "drain the Tallow queue", "private") == ["Tallow"]  # needs the flag
    private = recognize(index, "drain the Tallow queue", resolve("private", True))
    assert [(m["name"], m.get("formerly")) for m in private] == [("Wicklow", ["Tallow"])]


def test_an_expired_successor_does_not_stand_in(tmp_path: Path) -> None:
    agents = {
        "codex": {
            "known_entities": [
                {"name": "Bracken", "type": "project", "summary": "the live one"},
                {
                    "name": "Heronsbill",
                    "type": "project",
                    "summary": "an attempt that ended",
                    "supersedes": ["Bracken"],
                    "valid_to": "2026-03-01",
                },
            ]
        }
    }
    index = index_at(build(tmp_path, agents), Clock(date(2026, 7, 1)))
    assert named(index, "Bracken build") == ["Bracken"]


def test_the_served_tools_mark_and_leave_out_over_the_mcp_client(tmp_path: Path) -> None:
    root = build(tmp_path, ENDED)
    index = index_at(root, Clock(date(2026, 7, 1)))
    server = create_server(root, watch=False, home=tmp_path / "home", peers_file=False, index=index)

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(server) as client:
            found = await client.call_tool(
                "find_entity", {"name": "Kestrel Gateway", "access_level": "team"}
            )
            turn = await client.call_tool(
                "prepare_recognition_context",
                {"prompt": "Kestrel Gateway and Marigold Ledger", "access_level": "team"},
            )
            return found.structured_content or {}, turn.structured_content or {}

    found, turn = anyio.run(run)
    assert found["matches"][0]["expired"] is True
    assert [m["name"] for m in turn["matched_entities"]] == ["Marigold Ledger"]
