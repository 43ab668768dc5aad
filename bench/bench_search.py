"""Search benchmark: search_federation over the large library.

Library: 20 agents x 1,000 entities x 500 sessions (30,000 rows). Targets: a search in-process
(``bourdon.query.search``, the search file warm) p50 <= 10 ms; over MCP stdio p50 <= 15 ms;
the first search after one agent's commit (its rows replaced in the search file) <= 100 ms.
Also reported: the first search on a library without a search file (it is filled then), and a
search as a quarantined caller (an in-memory table of its granted agents, once made).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import anyio
from common import measure, summarize, write
from mcp import Client, StdioServerParameters

from bourdon.access.visibility import Scope, resolve
from bourdon.query.index import Index
from bourdon.query.search import search
from bourdon.query.searchtables import tables_of
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library

WORDS = ("atlas harbor falcon ledger orbit quartz signal tundra velvet willow amber cobalt ember "
         "garnet juniper lumen meadow nimbus onyx prism raven sierra topaz umber vector zephyr"
         ).split()  # fmt: skip


def queries(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        out.append(
            rng.choice([a, f"{a} {b}", f'"{a} {b}"', f"{a[:3]}*", f"{a}-{b}-{rng.randrange(1000)}"])
        )
    return out


async def over_stdio(root: Path, texts: list[str]) -> dict[str, float]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "bourdon", "--library", str(root), "serve"],
                                   env={"HOME": str(root.parent)})  # fmt: skip
    samples = []
    async with Client(params, mode="legacy") as c:
        for text in texts[:20]:
            await c.call_tool("search_federation", {"query": text})
        for text in texts:
            start = time.perf_counter()
            answer = await c.call_tool("search_federation", {"query": text})
            samples.append((time.perf_counter() - start) * 1000)
            assert not answer.is_error, answer.content
    return summarize(samples)


def main() -> dict:
    rng = random.Random(3)
    texts = queries(rng, 300)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        library = make_large_library(root)
        index = Index(root)
        index.refresh()
        team = resolve("team", False)
        start = time.perf_counter()
        search(index, "atlas", access=team)
        first = (time.perf_counter() - start) * 1000
        it = iter(texts * 10)
        warm = measure(lambda: search(index, next(it), access=team), runs=300)
        quarantined = resolve(
            "team", False, scope=Scope(agents=frozenset({"agent-01", "agent-02"}))
        )
        narrow = measure(lambda: search(index, next(it), access=quarantined), runs=200)
        samples = []
        for n in range(10):
            library.commit(
                "agent-05",
                {"notes": [{"date": "2026-11-30", "text": f"zeppelin {n}", "visibility": "team"}]},
                provenance=Provenance(caller="bench"),
            )
            index.refresh()
            start = time.perf_counter()
            found = search(index, f"zeppelin {n}", access=team)
            samples.append((time.perf_counter() - start) * 1000)
            assert found["total_matches"] >= 1 and tables_of(root).updated == ["agent-05"]
        library.close()
        stdio = anyio.run(over_stdio, root, texts)
    results = {
        "first_search_fills_the_file": {"ms": round(first, 1)},
        "in_process": warm,
        "quarantined_in_memory": narrow,
        "after_one_agents_commit": summarize(samples),
        "stdio": stdio,
    }
    return write(
        "search",
        results,
        {"in_process.p50_ms": 10.0, "stdio.p50_ms": 15.0, "after_one_agents_commit.p50_ms": 100.0},
    )


if __name__ == "__main__":
    main()
