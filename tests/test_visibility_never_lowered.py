"""Property: no write but the operator's explicit lowering makes a row less private.

Random sequences of writes from every tier -- the local operator, a trusted member, a
quarantined member whose staged writes are then promoted -- and from sync (another machine
pushes its version of the rows through a real bare git remote), each through the code the
server and the CLI run, on real libraries in tmp folders. After every step, each row's
effective visibility (its tags, its own visibility, the policy) is at least the strictest it
has had since it was created, except right after the operator lowered it on purpose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bourdon.model import ROW_SECTIONS, Visibility, row_key, row_visibility
from bourdon.replicate.remotes import add_remote
from bourdon.replicate.sync import sync
from bourdon.serve.writes.commit import commit_to_federation
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from bourdon.testing.remotes import bare_repository

AGENT = "desk-chat"  # the quarantined member's own namespace, so every tier can write it
NAMES = ("alpha", "Beta", "gamma")
LEVELS = ("public", "team", "private", None)

rows = st.fixed_dictionaries(
    {"name": st.sampled_from(NAMES), "summary": st.sampled_from(("s1", "s2"))},
    optional={
        "visibility": st.sampled_from(LEVELS),
        "tags": st.sampled_from((["secret"], ["work"], [])),
        "last_touched": st.sampled_from(("2026-11-01", "2026-12-31")),
    },
)
policies = st.fixed_dictionaries(
    {}, optional={"default": st.sampled_from(("public", "team", "private")),
                  "private_tags": st.sampled_from((["secret"], []))},
)
steps = st.one_of(
    st.tuples(st.just("operator"), rows, st.booleans()),
    st.tuples(st.just("trusted"), rows, st.sampled_from(("merge", "replace"))),
    st.tuples(st.just("trusted-policy"), policies),
    st.tuples(st.just("quarantined"), rows),
    st.tuples(st.just("sync"), rows),
)


def levels(data: dict[str, Any]) -> dict[tuple[str, tuple[str, ...]], Visibility]:
    """Each row's effective visibility, as the read tools decide it."""
    policy = data.get("visibility_policy") or {}
    return {
        (section, row_key(section, row)): row_visibility(row, policy)
        for section in ROW_SECTIONS
        for row in data.get(section) or []
    }


def apply(step: tuple[Any, ...], here: Library, there: Library) -> bool:
    """Run one write; ``True`` when it was the operator's explicit lowering."""
    kind = step[0]
    if kind == "operator":
        _, row, lower = step
        explicit = {"allow_lower_visibility": True} if lower else {}
        here.commit(AGENT, {"known_entities": [row]}, **explicit)
        return bool(lower)
    if kind in ("trusted", "trusted-policy"):
        change = (
            {"known_entities": [step[1]]} if kind == "trusted" else {"visibility_policy": step[1]}
        )
        mode = step[2] if kind == "trusted" else "merge"
        commit_to_federation(
            here, AGENT, change, mode=mode, expected_digest=None,
            provenance=Provenance(caller="ops-laptop"), staged=False,
            level=int(Visibility.TEAM), local=False,
        )
        return False
    if kind == "quarantined":
        commit_to_federation(
            here, AGENT, {"known_entities": [step[1]]}, mode="merge", expected_digest=None,
            provenance=Provenance(caller=AGENT), staged=True,
            level=int(Visibility.TEAM), local=False,
        )
        here.promote(AGENT, AGENT)
        return False
    sync(there, "origin")
    change = {"agent": {"type": "other"}, "known_entities": [step[1]]}
    there.commit(AGENT, change, provenance=Provenance(caller="pusher"))
    sync(there, "origin")
    sync(here, "origin")
    return False


@settings(
    max_examples=12, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=st.lists(rows, min_size=1, max_size=3), plan=st.lists(steps, min_size=1, max_size=5))
def test_no_write_but_the_operators_lowering_makes_a_row_less_private(
    tmp_path_factory: Any, first: list[dict[str, Any]], plan: list[tuple[Any, ...]]
) -> None:
    base: Path = tmp_path_factory.mktemp("prop")
    remote = bare_repository(base / "remote.git")
    here = Library.init(base / "here", machine="here")
    there = Library.init(base / "there", machine="there")
    try:
        for library in (here, there):
            add_remote(library, "origin", str(remote))
        start = manifest(AGENT, "other", visibility_policy={"private_tags": ["secret"]})
        here.commit(AGENT, {**start, "known_entities": first})
        strictest = levels(here.read(AGENT).data)
        for step in plan:
            lowered = apply(step, here, there)
            now = levels(here.read(AGENT).data)
            for key, level in now.items():
                was = strictest.get(key)
                if was is not None and not lowered:
                    assert level >= was, (step, key, level, was)
            # The strictest level a row has had, since it exists; a removed row starts over.
            strictest = {
                k: (v if lowered else max(v, strictest.get(k, v))) for k, v in now.items()
            }
    finally:
        here.close()
        there.close()
