"""Traversal benchmark (expand_neighbors, fetch_slice).

Library: 20 agents x 1,000 entities x 500 sessions (the benchmark library of the issues).
The graph of what one audience may see is built once per snapshot (then cached); targets:
that build <= 1,500 ms; a warm expand_neighbors p50 <= 5 ms at depth 1 and <= 50 ms at
depth 3 (24 neighbours kept); a warm fetch_slice p50 <= 30 ms.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from common import measure, write

from bourdon.access.visibility import resolve
from bourdon.query import graph, walk
from bourdon.query.index import Index
from bourdon.testing import make_large_library

TARGETS = {
    "graph_build.p50_ms": 1500.0,
    "expand_depth_1.p50_ms": 5.0,
    "expand_depth_3.p50_ms": 50.0,
    "fetch_slice.p50_ms": 30.0,
}


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        make_large_library(root).close()
        index = Index(root)
        index.refresh()
        access = resolve("team", False)
        builds = []
        for _ in range(3):
            start = time.perf_counter()
            built = graph.build(index.state, access)
            builds.append((time.perf_counter() - start) * 1000)
        rng = random.Random(7)
        # The most-named entities as seeds, so the walks have neighbourhoods to find.
        names = sorted(built.into, key=lambda n: (-len(built.into[n]), n))[:200]
        walk.expand_neighbors(index, names[0])  # the cached graph, as every later call has it
        pick = iter(rng.choice(names) for _ in range(10_000))
        one = measure(lambda: walk.expand_neighbors(index, next(pick)), runs=300, warmup=20)
        three = measure(
            lambda: walk.expand_neighbors(index, next(pick), depth=3, limit=24), runs=100, warmup=5
        )
        sessions = [n for n in built.nodes if n.startswith("session:")]
        ids = iter(rng.choice(sessions) for _ in range(10_000))
        sliced = measure(lambda: walk.fetch_slice(index, "session", next(ids)), runs=100, warmup=5)
        found = [
            len(walk.expand_neighbors(index, n, depth=3, limit=24)["neighbors"]) for n in names[:50]
        ]
        results = {
            "library": {"agents": 20, "entities": 20_000, "sessions": 10_000},
            "graph": {
                "nodes": len(built.nodes),
                "edges": sum(len(v) for v in built.out.values()),
                "neighbours_at_depth_3_mean": round(sum(found) / len(found), 1),
            },
            "graph_build": {"p50_ms": round(sorted(builds)[1], 3), "max_ms": round(max(builds), 3)},
            "expand_depth_1": one,
            "expand_depth_3": three,
            "fetch_slice": sliced,
        }
    return write("walk", results, TARGETS)


if __name__ == "__main__":
    main()
