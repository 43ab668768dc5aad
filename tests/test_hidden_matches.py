"""When the level a read is answered at hides matches, the answer says how many and which
level would show them, but only to a caller entitled to that level: a member capped at team is
never told about private rows, an anonymous reader (public only) about anything, not even as a
count. Driven over the sample library (``ledgerline`` is a team row, with a private one too).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.visibility import Scope
from bourdon.model import Visibility
from bourdon.query import reads, search
from bourdon.query.context import HEADER, OWN_HEADER, prepare_recognition_context
from bourdon.query.index import Index
from bourdon.testing import make_library

OPERATOR = Scope()  # on this machine: every level
MEMBER = Scope(local=False)  # over the network: team at most
CAPPED = Scope(local=False, ceiling=Visibility.PUBLIC)  # an anonymous reader


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("hidden") / "lib"
    make_library(root).close()
    idx = Index(root)
    idx.refresh()
    yield idx


def hint(answer: dict[str, Any]) -> tuple[list[tuple[str, int]], str | None]:
    found = [(h["access_level"], h["count"]) for h in answer["meta"].get("hidden", [])]
    return found, answer["meta"].get("hint")


def test_find_entity_at_public_says_what_team_and_private_would_show(index: Index) -> None:
    answer = reads.find_entity(index, "ledgerline", scope=OPERATOR)
    assert answer["matches"] == []
    levels, said = hint(answer)
    assert [level for level, _ in levels] == ["team", "private"]
    assert all(n >= 1 for _, n in levels)
    assert said is not None and "access_level='team'" in said and "include_private=true" in said
    # What the hint promised is what the wider level shows.
    team = reads.find_entity(index, "ledgerline", "team", scope=OPERATOR)
    assert len(team["matches"]) == dict(levels)["team"]
    assert "ledgerline" not in str(answer["meta"])  # counts only, never content


def test_a_member_over_the_network_is_told_of_team_rows_only(index: Index) -> None:
    levels, said = hint(reads.find_entity(index, "ledgerline", scope=MEMBER))
    assert [level for level, _ in levels] == ["team"]
    assert said is not None and "private" not in said


def test_a_caller_capped_at_public_is_told_nothing(index: Index) -> None:
    answer = reads.find_entity(index, "ledgerline", scope=CAPPED)
    assert hint(answer) == ([], None)
    assert "hidden" not in answer["meta"] and "hint" not in answer["meta"]


def test_nothing_is_said_when_nothing_is_hidden(index: Index) -> None:
    answer = reads.find_entity(index, "ledgerline", "private", True, scope=OPERATOR)
    assert hint(answer) == ([], None)


def test_recent_work_and_notes_count_the_window_a_wider_level_adds(index: Index) -> None:
    for read, key in ((reads.list_recent_work, "sessions"), (reads.list_notes, "notes")):
        public = read(index, "2000-01-01", scope=MEMBER)
        team = read(index, "2000-01-01", access_level="team", limit=100, scope=MEMBER)
        levels, said = hint(public)
        more = len(team[key]) - len(public[key])
        assert more > 0, key
        assert levels == [("team", more)], key
        assert said == f"{more} more {key if more != 1 else key[:-1]} with access_level='team'"
        assert hint(read(index, "2000-01-01", scope=CAPPED)) == ([], None)


def test_search_counts_the_matches_a_wider_level_adds(index: Index) -> None:
    public = search.search_federation(index, "ledgerline", access_level="public", scope=MEMBER)
    team = search.search_federation(index, "ledgerline", access_level="team", scope=MEMBER)
    levels, _ = hint(public)
    assert levels == [("team", team["meta"]["matched"] - public["meta"]["matched"])]
    assert levels[0][1] > 0
    capped = search.search_federation(index, "ledgerline", access_level="public", scope=CAPPED)
    assert hint(capped) == ([], None)


def test_turn_start_text_keeps_the_agents_own_rows_apart(tmp_path: Path) -> None:
    library = make_library(tmp_path / "lib", sample=False)
    shared = {"name": "Ledgerline", "summary": "books", "visibility": "team"}
    for agent, rows in (
        ("claude-code", [shared, {"name": "Quokka", "summary": "its own", "visibility": "team"}]),
        ("codex", [shared]),
    ):
        library.commit(agent, {"agent": {"type": "code-assistant"}, "known_entities": rows})
    library.close()
    idx = Index(tmp_path / "lib")
    idx.refresh()
    prompt = "ledgerline and quokka"

    text = prepare_recognition_context(idx, prompt, "team", agent="claude-code")["prompt_context"]
    others, _, own = text.partition(OWN_HEADER)
    assert others.splitlines()[0] == HEADER
    assert "Ledgerline" in others and "Quokka" not in others, text
    assert "[bourdon:claude-code] Quokka" in own, text

    # Asked by codex, Quokka is another agent's, and Ledgerline is still known to both.
    text = prepare_recognition_context(idx, prompt, "team", agent="codex")["prompt_context"]
    assert OWN_HEADER not in text and "Quokka" in text and "Ledgerline" in text, text

    # With no agent named, every row is presented as before.
    text = prepare_recognition_context(idx, prompt, "team")["prompt_context"]
    assert text.splitlines()[0] == HEADER and OWN_HEADER not in text
