"""A long history: 10,000 commits of one agent through the library, packing on and off.

One agent (200 entities), one writer in-process (``Library.commit``, as every surface does), each
commit updating one entity's summary. Measured: each commit (p50/p99 over the run and over its
last 1,000), the first page of the agent's versions (``list_memory_versions``' call: 21
versions) and ``history(50)`` right after a write and again warm, every ``READ_EVERY`` commits,
and ``git count-objects -v`` at the end. Then the same with packing disabled (``gc.auto=0``) over
a shorter run, for comparison. Targets: the last 1,000 commits' p99 <= 150 ms, the versions
page after a write p50 <= 30 ms, and at most ``LOOSE_LIMIT`` plus the estimate's slack loose
objects once the last background pack ended.

``python bench/bench_history.py [commits] [commits_off]`` (defaults 10,000 and 2,000).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import summarize, write

from bourdon.store.git.packing import LOOSE_LIMIT
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest

COMMITS = 10_000
COMMITS_OFF = 2_000
ENTITIES = 200
READ_EVERY = 50
AGENT = "long-history"


def count_objects(root: Path) -> dict[str, int]:
    out = run_git(root, "count-objects", "-v").decode()
    found = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return {
        "count": int(found["count"]),
        "size_kb": int(found["size"]),
        "in_pack": int(found["in-pack"]),
        "packs": int(found["packs"]),
        "size_pack_kb": int(found["size-pack"]),
    }


def timed(fn: Any, samples: list[float]) -> Any:
    start = time.perf_counter()
    out = fn()
    samples.append((time.perf_counter() - start) * 1000)
    return out


def run(root: Path, commits: int, packing: bool) -> dict[str, Any]:
    label = "on" if packing else "off"
    library = Library.init(root)
    if not packing:
        library.repo.config_set("gc.auto", "0")
    who = Provenance(caller="bench", session="history")
    rows = [{"name": f"entity-{n}", "summary": "first"} for n in range(ENTITIES)]
    library.commit(AGENT, manifest(AGENT, known_entities=rows), provenance=who)
    commit_ms: list[float] = []
    after: dict[str, list[float]] = {"versions": [], "history50": []}
    warm: dict[str, list[float]] = {"versions": [], "history50": []}
    written = 1
    runs: set[str] = set()
    pid_file = library.repo.git_dir / "bourdon-pack.pid"
    started = time.perf_counter()
    for n in range(commits):
        change = {"known_entities": [{"name": f"entity-{n % ENTITIES}", "summary": f"write {n}"}]}
        timed(lambda c=change: library.commit(AGENT, c, provenance=who), commit_ms)
        written += 1
        if pid_file.exists():
            runs.add(pid_file.read_text(encoding="ascii"))
        if n % READ_EVERY == READ_EVERY - 1:
            # Right after a write (the history cache has one commit to catch up), then warm.
            page = timed(lambda: library.history(AGENT, limit=21), after["versions"])
            timed(lambda: library.history(AGENT, limit=21), warm["versions"])
            if len(page) != 21:
                raise RuntimeError(f"the versions page has {len(page)} versions, not 21")
            again = {"known_entities": [{"name": "entity-0", "summary": f"again {n}"}]}
            library.commit(AGENT, again, provenance=who)  # not timed: a write before the next
            written += 1
            timed(lambda: library.history(AGENT, limit=50), after["history50"])
            timed(lambda: library.history(AGENT, limit=50), warm["history50"])
        if (n + 1) % 1000 == 0:
            state = library.repo.object_store()
            print(
                f"  [{label}] {n + 1} commits, {time.perf_counter() - started:.0f} s, "
                f"~{state.loose} loose, {state.packs} packs, {len(runs)} pack runs",
                flush=True,
            )
    at_end = count_objects(root)
    ended = library.repo.packer.wait(timeout=600)
    settled = count_objects(root)
    versions = len(library.history(AGENT, limit=None))
    if versions != written:
        raise RuntimeError(f"{versions} versions, {written} written")
    clean, said = library.fsck()
    if not clean:
        raise RuntimeError(f"git fsck failed after the benchmark: {said}")
    library.close()
    return {
        f"{label}_commit_all": summarize(commit_ms),
        f"{label}_commit_last_1000": summarize(commit_ms[-1000:]),
        f"{label}_versions_page_after_write": summarize(after["versions"]),
        f"{label}_versions_page_warm": summarize(warm["versions"]),
        f"{label}_history50_after_write": summarize(after["history50"]),
        f"{label}_history50_warm": summarize(warm["history50"]),
        f"{label}_objects_at_last_commit": at_end,
        f"{label}_objects_settled": {**settled, "pack_ended": ended},
        f"{label}_run": {
            "commits": commits,
            "pack_runs": len(runs),
            "seconds": round(time.perf_counter() - started, 1),
        },
    }


def main(commits: int = COMMITS, commits_off: int = COMMITS_OFF) -> dict:
    results: dict[str, Any] = {"loose_limit": {"objects": LOOSE_LIMIT}}
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        print(f"  packing on: {commits} commits", flush=True)
        results.update(run(Path(tmp) / "on", commits, packing=True))
        print(f"  packing off: {commits_off} commits", flush=True)
        results.update(run(Path(tmp) / "off", commits_off, packing=False))
    return write(
        "history",
        results,
        {
            "on_commit_last_1000.p99_ms": 150,
            "on_versions_page_after_write.p50_ms": 30,
            "on_objects_settled.count": LOOSE_LIMIT * 2,
        },
    )


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
