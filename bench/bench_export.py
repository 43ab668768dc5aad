"""Export benchmark (issue: readers and export hooks): a generated Claude Code store, ~1 GB.

Store: ``tests.support.stores.claude_code.write_store(home, sessions=500, size="bench")``.
Measured: first export (read, redact, guard, commit) in a child process, as MB/s of store bytes
and its peak RSS; a forced re-export (the store read again, nothing new to commit); and a
re-export with nothing new (fingerprint only), in-process and through ``bourdon hook export``.
Targets: >= 50 MB/s (as <= 20 ms per MB), peak RSS <= 300 MB, nothing-new re-export <= 200 ms.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import measure, write

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = int(os.environ.get("BOURDON_BENCH_SESSIONS", "500"))

# Runs in a child process so its peak RSS is the export's alone.
CHILD = """
import json, resource, socket, sys, time
from pathlib import Path
from bourdon.ingest.pipeline import export_reader
from bourdon.store.library import Library
from bourdon.readers.base import ReaderContext
from bourdon.readers.claude_code import ClaudeCodeReader

home, lib, force = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "force"
library = Library.open(lib)
ctx = ReaderContext(home=home, env={}, machine=socket.gethostname())
start = time.perf_counter()
result = export_reader(library, ClaudeCodeReader(), ctx, force=force)
seconds = time.perf_counter() - start
library.close()
maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
hwm = None
try:  # the kernel's high-water mark of this process image alone
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
except OSError:
    pass
print(json.dumps({
    "seconds": seconds,
    # ru_maxrss survives vfork and exec on Linux: it reports the bench parent's size once the
    # earlier benchmarks have grown it, not the export's. VmHWM is this image's own peak.
    "peak_rss_mb": hwm if hwm is not None else maxrss,
    "ru_maxrss_mb": maxrss,
    "outcome": result.outcome,
    "rows": result.rows,
    "redacted": sum(result.redacted.values()),
    "store_bytes": result.store_bytes,
    "store_files": result.store_files,
}))
"""


GENERATE = """
import sys
from pathlib import Path
from tests.support.stores.claude_code import write_store
write_store(Path(sys.argv[1]), sessions=int(sys.argv[2]), size="bench")
"""


def child(home: Path, lib: Path, force: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), str(lib), "force" if force else "-"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"export child failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def missing(reason: str) -> dict[str, Any]:
    print(f"  generator missing: {reason}")
    doc = {
        "benchmark": "export",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "results": {"generator": "missing", "reason": reason},
        "targets": {},
        "ok": False,
    }
    from common import RESULTS

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "export.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc


def main() -> dict[str, Any]:
    try:  # written by another issue; imported lazily so its absence is a result, not a crash
        from tests.support.stores.claude_code import write_store  # noqa: F401
    except ImportError as exc:
        return missing(f"tests.support.stores.claude_code.write_store: {exc}")
    from bourdon.ingest.pipeline import export_reader
    from bourdon.readers.base import ReaderContext
    from bourdon.readers.claude_code import ClaudeCodeReader
    from bourdon.store.library import Library

    with tempfile.TemporaryDirectory(prefix="bourdon-bench-export-") as tmp:
        home, lib = Path(tmp) / "home", Path(tmp) / "lib"
        start = time.perf_counter()
        # In a child too: a parent grown by the generator would hand its peak RSS down to the
        # export children (ru_maxrss survives fork and exec on Linux).
        subprocess.run(
            [sys.executable, "-c", GENERATE, str(home), str(SESSIONS)], check=True, cwd=ROOT
        )
        store = home / ".claude"
        generate_s = time.perf_counter() - start
        size = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
        Library.init(lib).close()

        first = child(home, lib, force=False)
        forced = child(home, lib, force=True)
        mb = first["store_bytes"] / 1e6

        library = Library.open(lib)
        ctx = ReaderContext(home=home, env={}, machine=socket.gethostname())
        reader = ClaudeCodeReader()
        outcome = export_reader(library, reader, ctx).outcome
        assert outcome == "unchanged", outcome
        nothing_new = measure(lambda: export_reader(library, reader, ctx), runs=30)
        library.close()

        env = {**os.environ, "HOME": str(home), "BOURDON_LIBRARY": str(lib)}
        startup = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            startup.append((time.perf_counter() - t) * 1000)
        hook = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "bourdon", "hook", "export", "claude-code"],
                env=env,
                cwd=ROOT,
                check=True,
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
            hook.append((time.perf_counter() - t) * 1000)

        results = {
            "store": {
                "sessions": SESSIONS,
                "bytes": size,
                "files": first["store_files"],
                "generate_s": round(generate_s, 1),
            },
            "export": {
                "seconds": round(first["seconds"], 2),
                "mb_per_s": round(mb / first["seconds"], 1),
                "ms_per_mb": round(first["seconds"] * 1000 / mb, 2),
                "peak_rss_mb": round(first["peak_rss_mb"], 1),
                "ru_maxrss_mb": round(first["ru_maxrss_mb"], 1),
                "outcome": first["outcome"],
                "rows": first["rows"],
                "redacted": first["redacted"],
            },
            "forced_reexport": {
                "seconds": round(forced["seconds"], 2),
                "mb_per_s": round(mb / forced["seconds"], 1),
                "peak_rss_mb": round(forced["peak_rss_mb"], 1),
                "outcome": forced["outcome"],
            },
            "nothing_new": nothing_new,
            "hook_export_cli_nothing_new": {
                "p50_ms": round(sorted(hook)[len(hook) // 2], 1),
                "max_ms": round(max(hook), 1),
                "python_startup_p50_ms": round(sorted(startup)[len(startup) // 2], 1),
                "note": "a whole 'bourdon hook export' process, Python start-up included",
            },
        }
        print(
            f"  store {size / 1e6:,.0f} MB in {first['store_files']} files; first export "
            f"{first['seconds']:.1f} s = {mb / first['seconds']:.0f} MB/s, "
            f"peak RSS {first['peak_rss_mb']:.0f} MB, {first['rows']} rows"
        )
    return write(
        "export",
        results,
        {
            "export.ms_per_mb": 20,  # >= 50 MB/s
            "export.peak_rss_mb": 300,
            "forced_reexport.peak_rss_mb": 300,
            "nothing_new.p50_ms": 200,
        },
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    doc = main()
    raise SystemExit(0 if doc["ok"] else 1)
