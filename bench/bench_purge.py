"""Purge benchmark: ``purge --text`` and ``purge --entity`` over a library with real history.

Input: 5 agents x 990 entities, then 200 commits that each change one entity's summary, a
text in one row of one agent for the first half of them. Measured: a dry run, a text purge and
an entity purge (each on a fresh copy), the whole run: replay, ref transaction, prune, fsck.
Target: a purge of this library <= 60 s on the reference machine (2 cores); most of it is
parsing and writing the manifests that hold the text, then ``git gc --prune=now``.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from common import write

from bourdon.store.library import Library
from bourdon.store.purge import purge
from bourdon.testing import make_large_library

AGENTS = 5
ENTITIES = 990
COMMITS = 200
TEXT = "BENCHCANARY"


def build(root: Path) -> None:
    library = make_large_library(root, agents=AGENTS, entities=ENTITIES, sessions=50)
    for n in range(COMMITS):
        agent = f"agent-{n % AGENTS:02d}"
        summary = f"write {n} of {TEXT}" if n < COMMITS // 2 else f"write {n}"
        row = {"name": f"bench-row-{n % 7}", "type": "project", "summary": summary}
        library.commit(agent, {"known_entities": [row]})
    library.close()


def timed(source: Path, work: str, **options: object) -> float:
    target = source.parent / work
    shutil.copytree(source, target, symlinks=True)
    library = Library.open(target)
    start = time.perf_counter()
    report = purge(library, **options)  # type: ignore[arg-type]
    took = (time.perf_counter() - start) * 1000
    library.close()
    assert options.get("dry_run") or report.fsck_clean, report.fsck_said
    return took


def main() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "lib"
        build(source)
        results = {
            "dry_run": {"ms": round(timed(source, "dry", text=TEXT, dry_run=True), 1)},
            "purge_text": {"ms": round(timed(source, "text", text=TEXT), 1)},
            "purge_entity": {"ms": round(timed(source, "entity", entity="bench-row-3"), 1)},
            "commits": {"count": COMMITS + AGENTS + 1},
        }
    return write("purge", results, {"purge_text.ms": 60_000, "purge_entity.ms": 60_000})


if __name__ == "__main__":
    main()
