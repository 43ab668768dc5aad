"""Cold-start benchmark (issue 11): the first ``bourdon serve`` on a library with no cache.

A user who clones their library onto a new machine, or deletes ``.bourdon/`` (local and
git-ignored, deletable at any time), starts a server that must parse and validate every
manifest before it can answer. Library: 20 agents x 1,000 entities x 500 sessions
(generated). Each sample copies it afresh, deletes the copy's ``.bourdon/``, then times
``bourdon serve`` over stdio from spawn to the first answered ``find_entity``; a second start
on the same copy (its cache now filled by the first) is timed as the warm counterpart.

"Cold" is bourdon's cache, not the operating system's: the copy was just written, so its
files are in the page cache, as they are on a machine that just cloned them.

Targets on the 2-core dev box: cold start p50 <= 1.5 s, warm start p50 <= 0.8 s. The
``pieces`` say where a start goes: importing the server (a fresh interpreter), reading one
manifest the quick way and the general way, validating its rows, loading its cached form, and
building the index of the whole library from a filled cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from common import summarize, write
from mcp import Client, StdioServerParameters

from bourdon.formats import reading, yamlio
from bourdon.query.index import Index
from bourdon.store.manifestcache import _RECENT, ManifestCache, content_id
from bourdon.testing import make_large_library

SAMPLES = 5
AGENTS, ENTITIES, SESSIONS = 20, 1000, 500  # per agent: entities and sessions


async def first_answer_ms(root: Path, home: Path) -> float:
    """Spawn ``bourdon serve`` (stdio) on ``root``; ms until its first tool call is answered."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve", "--no-watch"],
        env={
            "HOME": str(home),
            "BOURDON_HOME": str(home / ".bourdon"),
            # The bourdon under test, not whichever one the interpreter has installed.
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
    )
    start = time.perf_counter()
    async with Client(params) as client:
        result = await client.call_tool("find_entity", {"name": "atlas", "access_level": "team"})
        elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(f"the server answered an error: {result.content}")
    return elapsed


async def starts(source: Path, work: Path) -> tuple[list[float], list[float]]:
    cold, warm = [], []
    for n in range(SAMPLES):
        copy, home = work / f"copy-{n}", work / f"home-{n}"
        shutil.copytree(source, copy, symlinks=True)
        shutil.rmtree(copy / ".bourdon", ignore_errors=True)
        home.mkdir()
        cold.append(await first_answer_ms(copy, home))
        if not any((copy / ".bourdon" / "cache").rglob("*.json")):
            raise RuntimeError("the first start left no cache: the warm start would be cold too")
        warm.append(await first_answer_ms(copy, home))
        shutil.rmtree(copy)
    return cold, warm


def cpu_ms(fn: object, runs: int = 3) -> float:
    """Median CPU milliseconds of ``fn()`` (CPU time: other work on the box stretches wall time)."""
    samples = []
    for _ in range(runs):
        start = time.process_time()
        fn()  # type: ignore[operator]
        samples.append((time.process_time() - start) * 1000)
    return round(sorted(samples)[len(samples) // 2], 1)


def pieces(source: Path, work: Path) -> dict[str, float]:
    """Where a start goes, piece by piece (one manifest, or the whole library for the index)."""
    imports = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import bourdon.serve.server"], check=True)
        imports.append((time.perf_counter() - start) * 1000)
    raw = next(iter(sorted((source / "agents").glob("*.l5.yaml")))).read_bytes()
    data = yamlio.load(raw)
    _RECENT.clear()  # the generator's writes left their manifests in memory: read from disk
    copy = work / "pieces"
    shutil.copytree(source, copy, symlinks=True)
    cache = ManifestCache(copy / ".bourdon" / "cache")
    cache.read(raw, what="one")
    Index(copy).refresh()  # fills the cache for every manifest
    return {
        "import_server_wall_ms": round(sorted(imports)[1], 1),
        "parse_one_manifest_cpu_ms": cpu_ms(lambda: yamlio.load(raw)),
        "parse_one_manifest_general_cpu_ms": cpu_ms(lambda: yamlio.load_general(raw)),
        "validate_one_manifest_cpu_ms": cpu_ms(lambda: reading.read_data(data)),
        "load_one_cached_manifest_cpu_ms": cpu_ms(lambda: cache.get(content_id(raw))),
        "index_from_filled_cache_cpu_ms": cpu_ms(lambda: Index(copy).refresh()),
    }


def main() -> dict:
    load_before = os.getloadavg()[0]  # other work on the box stretches every figure
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-coldstart-") as tmp:
        source = Path(tmp) / "lib"
        make_large_library(source, AGENTS, ENTITIES, SESSIONS).close()
        size = sum(f.stat().st_size for f in (source / "agents").glob("*.l5.yaml"))
        cold, warm = anyio.run(starts, source, Path(tmp))
        parts = pieces(source, Path(tmp))
    results = {
        "library": {
            "agents": AGENTS,
            "entities": AGENTS * ENTITIES,
            "sessions": AGENTS * SESSIONS,
            "manifests_mb": round(size / 2**20, 1),
        },
        "cold_start_to_first_answer": summarize(cold),
        "warm_start_to_first_answer": summarize(warm),
        "pieces": parts,
        "load_average_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }
    targets = {
        "cold_start_to_first_answer.p50_ms": 1500,
        "warm_start_to_first_answer.p50_ms": 800,
    }
    return write("coldstart", results, targets)


if __name__ == "__main__":
    main()
