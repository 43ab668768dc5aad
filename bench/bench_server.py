"""Server benchmark (issue: the L6 server): lookups in-process, over stdio, start-up and memory.

Library: 20 agents x 1,000 entities x 500 sessions (generated).
Targets: in-process find_entity exact p50 <= 0.05 ms, fuzzy p50 <= 1 ms; MCP round trip of
find_entity over stdio p50 <= 3 ms; `bourdon serve` spawn to first answer <= 1.5 s with the cache
warm; server RSS <= 250 MB.
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

from bourdon.query import reads
from bourdon.query.index import Index
from bourdon.testing import make_large_library


def typo(name: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(name) - 1)
    return name[:at] + name[at + 1 :]  # one deletion


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def over_stdio(root: Path, names: list[str]) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve"],
        env={"HOME": str(root.parent)},
    )
    starts = []
    for _ in range(3):
        t = time.perf_counter()
        async with Client(params) as c:
            await c.call_tool("find_entity", {"name": names[0]})
            starts.append((time.perf_counter() - t) * 1000)
    samples = []
    async with Client(params, mode="legacy") as c:
        for name in names[:20]:
            await c.call_tool("find_entity", {"name": name, "access_level": "team"})
        for name in names[:300]:
            t = time.perf_counter()
            await c.call_tool("find_entity", {"name": name, "access_level": "team"})
            samples.append((time.perf_counter() - t) * 1000)
        await c.call_tool("list_recent_work", {"since": "2000-01-01", "limit": 100})
        pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
        server_rss = max(
            (rss_mb(p) for p in pids if b"bourdon" in _cmdline(p) and b"serve" in _cmdline(p)),
            default=float("nan"),
        )
    return {
        "stdio_find_entity": summarize(samples),
        "spawn_to_first_answer": summarize(starts),
        "server_rss_mb": {"value": round(server_rss, 1)},
    }


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root = Path(tmp) / "lib"
        make_large_library(root).close()
        index = Index(root)
        t = time.perf_counter()
        index.refresh()
        cold_ms = (time.perf_counter() - t) * 1000
        rng = random.Random(3)
        names = [e.name for v in index.agents.values() for e in v.entities]
        rng.shuffle(names)
        exact = iter(names * 10)
        typos = iter([typo(n, rng) for n in names[:2000]] * 10)

        def find_exact() -> None:
            index.refresh()
            reads.find_entity(index, next(exact), "team")

        def find_fuzzy() -> None:
            index.refresh()
            reads.find_entity(index, next(typos), "team")

        results = {
            "library": {
                "agents": len(index.agents),
                "entities": len(names),
                "sessions": len(index.sessions),
                "index_load_ms": round(cold_ms, 1),
            },
            "inprocess_find_entity_exact": measure(find_exact, runs=2000, warmup=50),
            "inprocess_find_entity_fuzzy": measure(find_fuzzy, runs=1000, warmup=20),
        }
        results.update(anyio.run(over_stdio, root, names))
    results["server_rss_mb"]["p50_ms"] = results["server_rss_mb"]["value"]  # for the target table
    return write(
        "server",
        results,
        {
            "inprocess_find_entity_exact.p50_ms": 0.05,
            "inprocess_find_entity_fuzzy.p50_ms": 1.0,
            "stdio_find_entity.p50_ms": 3.0,
            "spawn_to_first_answer.p50_ms": 1500,
            "server_rss_mb.p50_ms": 250,
        },
    )


if __name__ == "__main__":
    main()
