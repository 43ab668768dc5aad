"""Library benchmark (issue: foundation): commit, history(50) and read-at-version latency.

Library: 20 agents x 1,000 entities (x 500 sessions). Single writer.
Targets: commit p50 <= 25 ms, history(50) p50 <= 20 ms, read-at-version p50 <= 5 ms.
"""

from __future__ import annotations

import itertools
import random
import tempfile
import time
from pathlib import Path

from common import measure, summarize, write

from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        start = time.perf_counter()
        make_large_library(Path(tmp) / "lib").close()
        build_s = time.perf_counter() - start
        library = Library.open(Path(tmp) / "lib")
        rng = random.Random(7)
        counter = itertools.count()
        agents = library.agent_ids()
        who = Provenance(caller="bench", session="bench")

        def commit() -> None:
            # A typical write: refresh what is known of one entity and add a note.
            n = next(counter)
            agent = rng.choice(agents)
            entity = library.read(agent).rows("known_entities")[n % 1000]["name"]
            library.commit(
                agent,
                {
                    "known_entities": [{"name": entity, "summary": f"Updated by write {n}."}],
                    "notes": [{"date": "2026-11-30", "text": f"bench note {n}"}],
                },
                provenance=who,
            )

        samples = []
        for _ in range(3):
            commit()  # warm the parsed-manifest cache of this process
        for _ in range(200):
            t = time.perf_counter()
            commit()
            samples.append((time.perf_counter() - t) * 1000)
        commits = summarize(samples)
        busiest = max(agents, key=lambda a: len(library.history(a, limit=None)))
        versions = [v.version_id for v in library.history(busiest, limit=None)]
        history = measure(lambda: library.history(busiest, limit=50), runs=100)
        read_at = measure(lambda: library.read_bytes(busiest, rng.choice(versions)), runs=200)
        results = {
            "library": {
                "agents": len(agents),
                "entities_per_agent": 1000,
                "sessions_per_agent": 500,
                "build_s": round(build_s, 2),
                "versions_of_busiest_agent": len(versions),
            },
            "commit": commits,
            "history_50": history,
            "read_at_version": read_at,
        }
        library.close()
    return write(
        "library",
        results,
        {
            "commit.p50_ms": 25,
            "history_50.p50_ms": 20,
            "read_at_version.p50_ms": 5,
        },
    )


if __name__ == "__main__":
    main()
