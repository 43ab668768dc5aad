"""``make bench``: run every benchmark and write bench/results/*.json."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support

import bench_adopt
import bench_coldstart
import bench_export
import bench_export_incremental
import bench_freshness
import bench_history
import bench_library
import bench_peers
import bench_purge
import bench_recognition
import bench_search
import bench_server
import bench_status
import bench_sync
import bench_trace
import bench_walk
import bench_web
import bench_writes


def main() -> int:
    docs = []
    benches = (
        bench_library,
        bench_server,
        bench_coldstart,
        bench_writes,
        bench_recognition,
        bench_search,
        bench_freshness,
        bench_peers,
        bench_export,
        bench_export_incremental,
        bench_sync,
        bench_status,
        bench_adopt,
        bench_history,
        bench_walk,
        bench_trace,
        bench_purge,
        bench_web,
    )
    for module in benches:
        print(f"== {module.__name__}")
        docs.append(module.main())
    missed = [d["benchmark"] for d in docs if not d["ok"]]
    print("all targets met" if not missed else f"targets missed in: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
