"""Shared pieces of the benchmarks: timing, percentiles, writing results as JSON."""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def measure(fn: Callable[[], object], runs: int, warmup: int = 3) -> dict[str, float]:
    """Run ``fn`` and report p50/p99/mean/max in milliseconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return summarize(samples)


def summarize(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "runs": len(ordered),
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(pick(0.99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "max_ms": round(ordered[-1], 3),
    }


def write(name: str, results: dict[str, Any], targets: dict[str, float]) -> dict[str, Any]:
    """Save ``bench/results/<name>.json`` with pass/fail against the targets, and print it."""
    checks = {}
    for key, limit in targets.items():
        metric, _, stat = key.rpartition(".")
        value = results[metric][stat]
        checks[key] = {"value": value, "target": limit, "ok": value <= limit}
    doc = {
        "benchmark": name,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": _cpus()},
        "results": results,
        "targets": checks,
        "ok": all(c["ok"] for c in checks.values()),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    for key, check in checks.items():
        mark = "ok  " if check["ok"] else "MISS"
        print(f"  {mark} {key:<40} {check['value']:>10.3f}  (target <= {check['target']})")
    return doc


def _cpus() -> int:
    import os

    return os.cpu_count() or 0
