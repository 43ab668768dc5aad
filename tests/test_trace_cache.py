"""trace_entity keeps what it learned per library object (versions per branch tip, the names each
blob holds, the live rows a level sees); each test traces once, changes the library the way a
user would, and checks the next trace shows the change as a fresh library object would.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bourdon.query.trace import trace_entity
from bourdon.store import purge as purging
from bourdon.store.library import Library
from bourdon.testing import manifest


def kinds(trace: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["agent_id"], e["kind"]) for e in trace["timeline"]]


@pytest.fixture
def library(tmp_path: Path) -> Library:
    library = Library.init(tmp_path / "lib")
    atlas = [{"name": "Atlas", "summary": "map service"}]
    library.commit("alpha", manifest("alpha", known_entities=atlas))
    library.commit("beta", manifest("beta", known_entities=[{"name": "Harbor"}]))
    return library


def test_a_commit_after_a_trace_is_in_the_next_trace(library: Library) -> None:
    assert kinds(trace_entity(library, "atlas")) == [("alpha", "entity_origin")]
    library.commit("alpha", {"known_entities": [{"name": "Atlas", "summary": "map service v2"}]})
    again = trace_entity(library, "atlas")
    assert kinds(again) == [("alpha", "entity_origin"), ("alpha", "changed")]
    assert again["timeline"][-1]["changes"]["summary"] == {
        "from": "map service",
        "to": "map service v2",
    }


def test_writes_to_other_agents_between_traces_keep_this_agents_timeline_whole(
    library: Library,
) -> None:
    trace_entity(library, "atlas")
    library.commit("beta", {"known_entities": [{"name": "Harbor", "summary": "docks"}]})
    assert kinds(trace_entity(library, "atlas")) == [("alpha", "entity_origin")]
    library.commit("alpha", {"known_entities": [{"name": "Atlas", "tags": ["maps"]}]})
    library.commit("beta", {"known_entities": [{"name": "Harbor", "summary": "quays"}]})
    again = trace_entity(library, "atlas")
    assert kinds(again) == [("alpha", "entity_origin"), ("alpha", "changed")]
    assert again["timeline"][-1]["changes"] == {"tags": {"from": None, "to": ["maps"]}}


def test_a_rollback_after_a_trace_brings_the_row_back_in_the_next_trace(
    library: Library,
) -> None:
    first = library.head()
    assert first is not None
    library.commit("alpha", manifest("alpha", known_entities=[{"name": "Orbit"}]), mode="replace")
    assert kinds(trace_entity(library, "atlas")) == [
        ("alpha", "entity_origin"),
        ("alpha", "removed"),
    ]
    library.rollback("alpha", first)
    again = trace_entity(library, "atlas")
    assert kinds(again)[-1] == ("alpha", "restored")
    assert again["timeline"][-1]["description"] == "Atlas restored in alpha memory by rollback"
    assert again["known_by"] == ["alpha"]


def test_an_agent_new_since_the_last_trace_is_in_the_next_one(library: Library) -> None:
    assert trace_entity(library, "atlas")["known_by"] == ["alpha"]
    library.commit("gamma", manifest("gamma", known_entities=[{"name": "atlas"}]))
    again = trace_entity(library, "atlas")
    assert again["known_by"] == ["alpha", "gamma"]
    assert kinds(again) == [("alpha", "entity_origin"), ("gamma", "entity_origin")]


def test_a_name_nobody_held_is_found_once_an_agent_records_it(library: Library) -> None:
    assert trace_entity(library, "Lumen")["matched"] is False
    library.commit("beta", {"known_entities": [{"name": "Lumen", "summary": "lights"}]})
    again = trace_entity(library, "lumen")
    assert again["matched"] is True
    assert again["known_by"] == ["beta"]


def test_a_rename_after_a_trace_of_the_new_name_follows_it_back_to_the_old_one(
    library: Library,
) -> None:
    assert trace_entity(library, "Atlas Maps")["matched"] is False
    renamed = [{"name": "Atlas Maps", "aliases": ["Atlas"], "summary": "map service"}]
    library.commit("alpha", manifest("alpha", known_entities=renamed), mode="replace")
    again = trace_entity(library, "Atlas Maps")
    assert kinds(again) == [("alpha", "entity_origin"), ("alpha", "renamed")]
    assert again["timeline"][0]["name"] == "Atlas"


def test_a_purge_after_a_trace_leaves_nothing_of_the_entity_in_the_next_trace(
    library: Library,
) -> None:
    assert trace_entity(library, "atlas")["known_by"] == ["alpha"]
    purging.purge(library, entity="Atlas")
    again = trace_entity(library, "atlas")
    assert again["matched"] is False
    assert "map service" not in str(again)


def test_a_write_through_another_library_object_is_in_the_next_trace(
    library: Library,
) -> None:
    assert kinds(trace_entity(library, "atlas")) == [("alpha", "entity_origin")]
    with Library.open(library.root) as other:
        other.commit("beta", {"known_entities": [{"name": "Atlas", "summary": "beta's atlas"}]})
    again = trace_entity(library, "atlas")
    assert again["known_by"] == ["alpha", "beta"]
    assert kinds(again) == [("alpha", "entity_origin"), ("beta", "entity_origin")]


def test_a_live_row_a_level_cannot_see_stays_out_of_the_next_trace_at_that_level(
    library: Library,
) -> None:
    # The filtered live sessions are kept per level: a private one never reaches team.
    sessions = [
        {"date": "2026-11-01", "session_id": "s-team", "project_focus": ["Atlas"]},
        {"date": "2026-11-02", "session_id": "s-private", "project_focus": ["Atlas"]},
    ]
    sessions[1]["visibility"] = "private"
    library.commit("alpha", {"recent_sessions": sessions})
    private = trace_entity(library, "atlas", "private", True)["attributions"][0]
    team = trace_entity(library, "atlas")["attributions"][0]
    private_again = trace_entity(library, "atlas", "private", True)["attributions"][0]
    assert [s["session_id"] for s in private["matching_sessions"]] == ["s-team", "s-private"]
    assert [s["session_id"] for s in team["matching_sessions"]] == ["s-team"]
    assert private_again["matching_sessions"] == private["matching_sessions"]


def test_a_second_trace_of_an_unknown_name_on_an_unchanged_library_runs_no_git(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_entity(library, "nobody-knows-this")
    started: list[object] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def run(*args: Any, **kwargs: Any) -> Any:
        started.append(args[0])
        return real_run(*args, **kwargs)

    class Popen(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            started.append(args[0])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(subprocess, "Popen", Popen)
    assert trace_entity(library, "nobody-knows-this")["matched"] is False
    assert trace_entity(library, "harbor")["known_by"] == ["beta"]
    assert started == []
