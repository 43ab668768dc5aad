"""The walk is gated, not only its output: a row the caller may not see is not a route.

A property over random libraries of three agents (entities sharing names across agents,
workstreams, sessions and notes naming them, every row public, team or private). For a team
caller, and for a quarantined member granted some namespaces (answered at team at most
whatever it asks), every expand_neighbors and fetch_slice answer must equal the answer of the
same call on a library from which the rows that caller may not see were deleted: same ids,
totals, truncation, distances, scores, unresolved seeds, and the same 404 for an id it may not
see as for one that does not exist. And no hidden row's id or text (each row carries a token
of its own) may appear anywhere in an answer, except a seed echoed back in ``unresolved``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bourdon.access.visibility import Scope
from bourdon.errors import NotFoundError
from bourdon.formats import yamlio
from bourdon.query.index import Index
from bourdon.query.rowid import row_id
from bourdon.query.walk import expand_neighbors, fetch_slice
from bourdon.testing import manifest

AGENTS = ("a0", "a1", "a2")
NAMES = ("atlas", "harbor", "falcon", "orbit", "quartz")
SPELLINGS = (*NAMES, "ATLAS", "harbour", "fal-con")  # harbour and fal-con exist only as aliases
LEVELS = ("public", "team", "private")
SECTIONS = ("known_entities", "known_workstreams", "recent_sessions", "notes")


@dataclass
class Planned:
    """One row as the test wrote it: its section, agent, level and the token in its text."""

    section: str
    agent: str
    level: str
    token: str
    row: dict[str, Any]


levels = st.sampled_from(LEVELS)
mentions = st.lists(st.sampled_from(SPELLINGS), max_size=3, unique=True)


@st.composite
def worlds(draw: st.DrawFn) -> list[Planned]:
    planned: list[Planned] = []
    counter = iter(range(10_000))

    def token() -> str:
        return f"tok{next(counter):04d}z"

    for agent in AGENTS:
        for name in draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True)):
            tok = token()
            row: dict[str, Any] = {"name": name, "summary": f"summary {tok}"}
            if draw(st.booleans()):
                row["aliases"] = [
                    {"atlas": "atl", "harbor": "harbour", "falcon": "fal-con"}.get(
                        name, f"{name}-x"
                    )
                ]
            if draw(st.booleans()):
                row["type"] = draw(st.sampled_from(("project", "person")))
            planned.append(Planned("known_entities", agent, draw(levels), tok, row))
        for i in range(draw(st.integers(0, 2))):
            tok = token()
            row = {
                "name": draw(st.sampled_from((f"ws {agent} {i}", *NAMES))),
                "status": "active",
                "summary": f"plan {tok}",
                "related_entities": draw(mentions),
            }
            if any(
                p.row.get("name") == row["name"]
                for p in planned
                if p.agent == agent and p.section == "known_workstreams"
            ):
                continue
            planned.append(Planned("known_workstreams", agent, draw(levels), tok, row))
        for i in range(draw(st.integers(0, 4))):
            tok = token()
            row = {
                "date": f"2026-11-{i + 1:02d}",
                "cwd": draw(st.sampled_from(("/src/atlas", "/w/harbor", "/tmp/other"))),
                "project_focus": draw(mentions),
                "files_touched": draw(
                    st.lists(st.sampled_from(("docs/orbit/a.md", "x.py")), max_size=1)
                ),
                "key_actions": [f"did {tok}"],
            }
            planned.append(Planned("recent_sessions", agent, draw(levels), tok, row))
        for _ in range(draw(st.integers(0, 3))):
            tok = token()
            row = {
                "date": f"2026-11-{draw(st.integers(1, 3)):02d}",
                "text": f"note {tok}",
                "related_entities": draw(mentions),
            }
            planned.append(Planned("notes", agent, draw(levels), tok, row))
    return planned


def write_library(root: Path, planned: list[Planned], keep: Callable[[Planned], bool]) -> Index:
    (root / "agents").mkdir(parents=True)
    for agent in AGENTS:
        sections: dict[str, list[dict[str, Any]]] = {s: [] for s in SECTIONS}
        for p in planned:
            if p.agent == agent and keep(p):
                sections[p.section].append({**p.row, "visibility": p.level})
        data = manifest(agent, **sections)
        (root / "agents" / f"{agent}.l5.yaml").write_bytes(yamlio.dump(data))
    index = Index(root)
    index.refresh()
    assert not index.problems and not index.row_problems
    return index


def hidden_rows(index: Index, visible: Callable[[Any], bool]) -> list[Any]:
    rows = [*index.entity_rows, *index.workstreams, *index.sessions, *index.notes]
    return [r for r in rows if not visible(r)]


def answer_or_error(call: Callable[[], dict[str, Any]]) -> Any:
    try:
        return call()
    except NotFoundError as error:
        return ("404", str(error))


@dataclass(frozen=True)
class Audience:
    name: str
    scope: Scope
    access_level: str
    include_private: bool
    granted: frozenset[str] | None

    def sees(self, p: Planned) -> bool:
        granted = self.granted is None or p.agent in self.granted
        return granted and p.level != "private"


def audiences(granted: frozenset[str]) -> list[Audience]:
    member = Scope(agents=granted, local=False)
    return [
        Audience("team", Scope(), "team", False, None),
        # A member over the network asking for private rows is answered at team.
        Audience("quarantined", member, "private", True, granted),
    ]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    planned=worlds(),
    granted=st.sets(st.sampled_from(AGENTS), max_size=2).map(frozenset),
    depth=st.integers(1, 3),
    limit=st.integers(1, 6),
    incoming=st.booleans(),
    seeds=st.lists(st.sampled_from(SPELLINGS), min_size=1, max_size=4, unique=True),
)
def test_answers_equal_those_of_the_library_without_the_hidden_rows(
    planned: list[Planned],
    granted: frozenset[str],
    depth: int,
    limit: int,
    incoming: bool,
    seeds: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full = write_library(Path(tmp) / "full", planned, lambda p: True)
        for who in audiences(granted):
            trimmed = write_library(Path(tmp) / who.name, planned, who.sees)
            check_audience(full, trimmed, planned, who, depth, limit, incoming, seeds)


def check_audience(
    full: Index,
    trimmed: Index,
    planned: list[Planned],
    who: Audience,
    depth: int,
    limit: int,
    incoming: bool,
    seeds: list[str],
) -> None:
    access = {"access_level": who.access_level, "include_private": who.include_private}
    visible_ids = {str(row_id(r)) for r in hidden_rows(trimmed, lambda r: False)}
    hidden = [r for r in hidden_rows(full, lambda r: False) if str(row_id(r)) not in visible_ids]
    hidden_ids = [str(row_id(r)) for r in hidden]
    hidden_tokens = [p.token for p in planned if not who.sees(p)]
    # Seeds: names and aliases, some visible rows' ids, and every hidden row's id.
    all_seeds = [*seeds, *sorted(visible_ids)[:2], *hidden_ids[:4]]

    def walk(index: Index) -> dict[str, Any]:
        return expand_neighbors(
            index, all_seeds, depth, limit, None, None, 200, incoming, **access, scope=who.scope
        )

    got, want = walk(full), walk(trimmed)
    assert got == want, who.name
    assert set(hidden_ids[:4]) <= set(got["unresolved"])
    slices = [(n["kind"], n["id"]) for n in got["neighbors"]]
    slices += [(kind, oid) for oid in got["origins"] for kind in (oid.partition(":")[0],)]
    slices += [(i.partition(":")[0], i) for i in hidden_ids[:4]]
    answers = [got]
    for kind, oid in slices:
        a = answer_or_error(
            lambda idx=full, k=kind, o=oid: fetch_slice(
                idx, k, o, 3, 500, **access, scope=who.scope
            )
        )
        b = answer_or_error(
            lambda idx=trimmed, k=kind, o=oid: fetch_slice(
                idx, k, o, 3, 500, **access, scope=who.scope
            )
        )
        assert a == b, (who.name, kind, oid)
        if oid in hidden_ids:
            assert a[0] == "404"
        elif isinstance(a, dict):
            answers.append(a)
    for answer in answers:
        text = json.dumps({k: v for k, v in answer.items() if k not in ("unresolved", "entity_id")})
        for leak in (*hidden_tokens, *hidden_ids):
            assert leak not in text, (who.name, leak)


def test_the_property_is_not_vacuous() -> None:
    """A library where a private note is the only bridge: the team answer is smaller."""
    planned = [
        Planned("known_entities", "a0", "team", "tok0001z", {"name": "atlas"}),
        Planned("known_entities", "a1", "team", "tok0002z", {"name": "orbit"}),
        Planned(
            "notes",
            "a2",
            "private",
            "tok0003z",
            {"date": "2026-11-01", "text": "note tok0003z", "related_entities": ["atlas", "orbit"]},
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        full = write_library(Path(tmp) / "full", planned, lambda p: True)
        team = expand_neighbors(full, "atlas", depth=2)
        mine = expand_neighbors(
            full, "atlas", depth=2, access_level="private", include_private=True
        )
        assert team["total"] == 0 and team["neighbors"] == []
        assert [(n["kind"], n["distance"]) for n in mine["neighbors"]] == [
            ("note", 1),
            ("entity", 2),
        ]
        # A member granted a0 and a1, not a2, asking for private rows: neither.
        member = expand_neighbors(
            full,
            "atlas",
            depth=2,
            access_level="private",
            include_private=True,
            scope=Scope(agents=frozenset({"a0", "a1"}), local=False),
        )
        assert member["total"] == 0
