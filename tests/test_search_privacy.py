"""No row a caller may not see weighs in its search: not in a score, a count, an order or a
snippet (property test).

Each example makes two libraries: one with random visible rows plus hidden ones (private
rows, team rows for a public caller, and an agent a quarantined caller is not granted) that
carry canary words and the visible rows' words too (so they would move BM25's statistics),
and one that never had the hidden rows. Every search must answer both the same, whole, and no
canary may appear anywhere in the answer.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bourdon.access.visibility import Scope, resolve
from bourdon.formats import yamlio
from bourdon.query.index import Index
from bourdon.query.search import search
from bourdon.testing import manifest

WORDS = ["ledger", "harbor", "import", "importing", "parser", "signal", "orbit", "quartz"]
PRIVATE_CANARY = "zanzibarcanary"
AGENT_CANARY = "quokkacanary"
GRANTED = ("a0", "a1")

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
level = st.sampled_from(["public", "team"])
entity = st.fixed_dictionaries({"summary": words, "tags": st.lists(st.sampled_from(WORDS),
                                max_size=2), "visibility": level})  # fmt: skip
session = st.fixed_dictionaries({"key_actions": st.lists(words, min_size=1, max_size=3),
                                 "visibility": level})  # fmt: skip
note = st.fixed_dictionaries({"text": words, "visibility": level})
agent_rows = st.tuples(
    st.lists(entity, max_size=6), st.lists(session, max_size=4), st.lists(note, max_size=3)
)
hidden_rows = st.lists(words, min_size=1, max_size=4)
query = st.one_of(
    st.sampled_from(WORDS),
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=3).map(" ".join),
    st.sampled_from(WORDS).map(lambda w: f"{w[:3]}*"),
    st.sampled_from(WORDS).map(lambda w: f'"{w} ledger"'),
    st.just(f"{PRIVATE_CANARY} ledger"),
    st.just(f"{AGENT_CANARY} harbor"),
)

_roots = itertools.count()


def rows_of(agent: str, rows: tuple[list[Any], list[Any], list[Any]], secret: list[str],
            keep: set[str], canary: str) -> dict[str, Any]:  # fmt: skip
    """The agent's manifest: its visible rows, then its hidden rows of each level not in
    ``keep`` (private rows, and team rows when only public ones are kept)."""
    ents, sessions, notes = rows
    entities = [{"name": f"{agent}-thing-{i}", **e} for i, e in enumerate(ents)]
    recent = [{"date": f"2026-10-{i + 1:02d}", "cwd": "/src/seen", **s}
              for i, s in enumerate(sessions)]  # fmt: skip
    notes_out = [{"date": f"2026-11-{i + 1:02d}", **n} for i, n in enumerate(notes)]
    if True:  # the visible rows of the levels kept
        entities = [e for e in entities if e["visibility"] in keep]
        recent = [s for s in recent if s["visibility"] in keep]
        notes_out = [n for n in notes_out if n["visibility"] in keep]
    if "private" in keep:
        for i, text in enumerate(secret):
            entities.append({"name": f"{agent}-hidden-{i}", "summary": f"{canary} {text}",
                             "tags": [canary], "visibility": "private"})  # fmt: skip
            recent.append(
                {
                    "date": f"2026-09-{i + 1:02d}",
                    "cwd": "/src/hidden",
                    "key_actions": [f"{text} {canary}"],
                    "visibility": "private",
                }
            )
            notes_out.append({"date": "2026-08-01", "text": f"{canary} {text}",
                              "visibility": "private"})  # fmt: skip
    return manifest(agent, known_entities=entities, recent_sessions=recent, notes=notes_out)


def library(base: Path, manifests: list[dict[str, Any]]) -> Index:
    root = base / f"lib-{next(_roots)}"
    (root / "agents").mkdir(parents=True)
    for data in manifests:
        (root / "agents" / f"{data['agent']['id']}.l5.yaml").write_bytes(yamlio.dump(data))
    index = Index(root)
    index.refresh()
    return index


def answer(index: Index, q: str, access_level: str, scope: Scope | None = None) -> str:
    access = resolve(access_level, False, scope=scope or Scope())
    found = search(index, q, access=access, top_k=50, min_score=0)
    return json.dumps(found, sort_keys=True)


def unasked(told: str) -> str:
    """The answer without the query it echoes (the caller's own words)."""
    return json.dumps({k: v for k, v in json.loads(told).items() if k != "query"})


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # each example is two libraries
)
@given(
    a0=agent_rows, a1=agent_rows, other=agent_rows, secret=hidden_rows,
    queries=st.lists(query, min_size=1, max_size=4),
)  # fmt: skip
def test_hidden_rows_change_nothing_a_caller_is_told(
    tmp_path: Path,
    a0: Any,
    a1: Any,
    other: Any,
    secret: list[str],
    queries: list[str],
) -> None:
    every = {"public", "team", "private"}
    full = library(tmp_path, [
        rows_of("a0", a0, secret, every, PRIVATE_CANARY),
        rows_of("a1", a1, secret, every, PRIVATE_CANARY),
        rows_of("zz", other, [*secret, AGENT_CANARY], every, AGENT_CANARY),
    ])  # fmt: skip
    seen = {"public", "team"}
    team = library(tmp_path, [
        rows_of("a0", a0, [], seen, PRIVATE_CANARY),
        rows_of("a1", a1, [], seen, PRIVATE_CANARY),
        rows_of("zz", other, [], seen, AGENT_CANARY),
    ])  # fmt: skip
    public = library(tmp_path, [
        rows_of(a, rows, [], {"public"}, PRIVATE_CANARY)
        for a, rows in (("a0", a0), ("a1", a1), ("zz", other))
    ])  # fmt: skip
    granted = library(tmp_path, [
        rows_of("a0", a0, [], seen, PRIVATE_CANARY),
        rows_of("a1", a1, [], seen, PRIVATE_CANARY),
    ])  # fmt: skip
    quarantined = Scope(agents=frozenset(GRANTED), local=False)
    for q in queries:
        told = answer(full, q, "team")
        assert told == answer(team, q, "team"), q
        assert PRIVATE_CANARY not in unasked(told)
        assert answer(full, q, "public") == answer(public, q, "public"), q
        # "private" without include_private is answered at team, too.
        asked_private = json.loads(answer(full, q, "private"))
        assert asked_private["results"] == json.loads(told)["results"]
        narrow = answer(full, q, "team", quarantined)
        assert narrow == answer(granted, q, "team", quarantined), q
        assert PRIVATE_CANARY not in unasked(narrow) and AGENT_CANARY not in unasked(narrow)
        assert all(r["metadata"]["agent"] in GRANTED for r in json.loads(narrow)["results"])


def test_the_canary_is_found_by_whoever_may_see_it(tmp_path: Path) -> None:
    """The positive control: the hidden rows are searchable at the level that shows them."""
    rows = ([{"summary": "ledger", "visibility": "team"}], [], [])
    index = library(tmp_path, [rows_of("a0", rows, ["ledger"], {"public", "team", "private"},
                                       PRIVATE_CANARY)])  # fmt: skip
    access = resolve("private", True)
    found = search(index, PRIVATE_CANARY, access=access, top_k=50)
    assert found["meta"]["matched"] == 3
    assert search(index, PRIVATE_CANARY, access=resolve("team", False))["meta"]["matched"] == 0
