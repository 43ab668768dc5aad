"""Tracing an entity through a long history: ``trace_entity`` over 1,000 commits of one agent.

One agent (200 entities), one writer in-process (``Library.commit``), each commit updating one
entity's summary, so the traced entity (``entity-0``) changes every 200th commit and is in every
version; two more agents hold it too, with a few commits each. Measured: the trace on a freshly
opened library (cold: nothing parsed in this process, the on-disk manifest cache as the writes
left it) and again warm, for the operator and for a team caller. Target: cold p50 <= 1,000 ms.

``python bench/bench_trace.py [commits]`` (default 1,000).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import measure, summarize, write

from bourdon.query.trace import trace_entity
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest

COMMITS = 1_000
ENTITIES = 200
AGENT = "long-history"
COLD_RUNS = 5


def build(root: Path, commits: int) -> int:
    """The library; returns how many events the operator's trace should hold."""
    library = Library.init(root)
    who = Provenance(caller="bench", session="trace")
    rows = [{"name": f"entity-{n}", "summary": "first"} for n in range(ENTITIES)]
    library.commit(AGENT, manifest(AGENT, known_entities=rows), provenance=who)
    for other in ("other-a", "other-b"):
        library.commit(other, manifest(other, known_entities=[{"name": "Entity-0"}]))
        library.commit(other, {"known_entities": [{"name": "entity-0", "aliases": ["e0"]}]})
    for n in range(commits - 1):
        change = {"known_entities": [{"name": f"entity-{n % ENTITIES}", "summary": f"write {n}"}]}
        library.commit(AGENT, change, provenance=who)
    library.close()
    return 1 + len(range(0, commits - 1, ENTITIES)) + 4


def main(commits: int = COMMITS) -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root = Path(tmp) / "lib"
        started = time.perf_counter()
        expected = build(root, commits)
        print(f"  {commits} commits written in {time.perf_counter() - started:.0f} s", flush=True)
        cold: list[float] = []
        for _ in range(COLD_RUNS):
            library = Library.open(root)
            start = time.perf_counter()
            answer = trace_entity(library, "entity-0", "private", True, limit=1000)
            cold.append((time.perf_counter() - start) * 1000)
            library.close()
        if len(answer["timeline"]) != expected:
            raise RuntimeError(f"{len(answer['timeline'])} events, {expected} expected")
        library = Library.open(root)
        results: dict[str, Any] = {
            "trace_cold": summarize(cold),
            "trace_warm_operator": measure(
                lambda: trace_entity(library, "entity-0", "private", True), runs=10
            ),
            "trace_warm_team": measure(lambda: trace_entity(library, "entity-0"), runs=10),
            "trace_unknown_warm": measure(lambda: trace_entity(library, "nobody"), runs=10),
            "history": {"commits": commits + 4, "events": expected},
        }
        library.close()
    return write("trace", results, {"trace_cold.p50_ms": 1000})


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]])
