"""Incremental export benchmark: one line appended to a 60+ MB Claude Code store, then export.

Store: ``tests.support.stores.claude_code.write_store(home, sessions=2500, size="mixed")``: 2,500
sessions, one in 100 with long tool outputs (~65 MB of transcripts), so the session cap leaves
2,000 out, as on a heavy user's machine.
Measured, in-process: the whole read (``export --force``: every file read again); the export
after one line was appended to one of the newest sessions, through the pipeline with the library
open and through the hook's path (``hookrun.hook_export``: the library opened, exported,
closed); of that export, the reader's resumed read alone (``read_from`` with the saved state);
and the export after a line appended to a session from the middle of the store (``--resume``
of an old session: the reader's checkpoint does not hold, every session is combined again).
Target: export after one appended line <= 100 ms p50 (Claude Code's SessionEnd hook times out
at 1.5 s by default).
"""

from __future__ import annotations

import gc
import json
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import summarize, write

ROOT = Path(__file__).resolve().parent.parent
RUNS = 15


def main() -> dict[str, Any]:
    from bourdon.ingest.hookrun import hook_export
    from bourdon.ingest.pipeline import export_reader
    from bourdon.ingest.resume import load_resume
    from bourdon.readers.base import ReaderContext
    from bourdon.readers.claude_code import ClaudeCodeReader
    from bourdon.store.library import Library
    from tests.support.stores.claude_code import first_timestamp, write_store

    with tempfile.TemporaryDirectory(prefix="bourdon-bench-incremental-") as tmp:
        home, lib = Path(tmp) / "home", Path(tmp) / "lib"
        started = time.perf_counter()
        store = write_store(home, sessions=2500, size="mixed")
        generate_s = time.perf_counter() - started
        files = [p for p in store.rglob("*.jsonl") if "projects" in p.parts]
        size = sum(p.stat().st_size for p in files)
        Library.init(lib).close()
        ctx = ReaderContext(home=home, env={}, machine=socket.gethostname())
        reader = ClaudeCodeReader()
        # The newest sessions (by their first record): the ones a user works in, whose rows
        # the cap keeps. And sessions from the middle of the store, as ``--resume`` reopens.
        by_start = sorted(files, key=first_timestamp)
        recent = by_start[-RUNS:]
        middle = by_start[len(by_start) // 2 : len(by_start) // 2 + RUNS]
        counter = iter(range(10**6))

        def append(among: list[Path] = recent) -> int:
            n = next(counter)
            path = among[n % len(among)]
            line = {
                "type": "user",
                "uuid": f"00000000-0000-4000-8000-{n:012d}",
                "sessionId": path.stem,
                "timestamp": "2026-06-30T18:00:00.000Z",
                "cwd": str(home / "src" / "ledgerline"),
                "message": {"role": "user", "content": f"one more thing, number {n}"},
            }
            data = json.dumps(line).encode() + b"\n"
            with open(path, "ab") as handle:
                handle.write(data)
            return len(data)

        library = Library.open(lib)
        whole, outcomes = [], []
        for _ in range(3):
            t = time.perf_counter()
            result = export_reader(library, reader, ctx, force=True)
            whole.append((time.perf_counter() - t) * 1000)
        rows, capped = result.rows, result.capped

        pipeline, read_only, bytes_read = [], [], []
        for _ in range(RUNS):
            append()
            state = load_resume(lib, "claude-code")
            gc.disable()  # as the pipeline does during an export
            t = time.perf_counter()
            reader.read_from(ctx, state)  # the read alone: the state is not saved
            read_only.append((time.perf_counter() - t) * 1000)
            gc.enable()
            t = time.perf_counter()
            result = export_reader(library, reader, ctx)
            pipeline.append((time.perf_counter() - t) * 1000)
            outcomes.append(result.outcome)
            bytes_read.append(result.stats.bytes_read if result.stats else -1)
        older = []
        for _ in range(RUNS):
            append(middle)
            t = time.perf_counter()
            export_reader(library, reader, ctx)
            older.append((time.perf_counter() - t) * 1000)
        library.close()

        hook = []
        for _ in range(RUNS):
            append()
            t = time.perf_counter()
            hook_export(lib, reader, ctx, {}, lambda: Library.open(lib))
            hook.append((time.perf_counter() - t) * 1000)

        results = {
            "store": {
                "sessions": 2500,
                "transcript_bytes": size,
                "files": len(files),
                "generate_s": round(generate_s, 1),
                "rows": rows,
                "capped": capped,
            },
            "whole_read_export": summarize(whole),
            "appended_line_read": summarize(read_only),
            "appended_line_export": {
                **summarize(pipeline),
                "outcomes": sorted(set(outcomes)),
                "bytes_read_p50": sorted(bytes_read)[len(bytes_read) // 2],
            },
            "appended_line_export_older_session": {
                **summarize(older),
                "note": "a session from the middle of the store: no checkpoint holds",
            },
            "appended_line_hook": {
                **summarize(hook),
                "note": "hookrun.hook_export in-process: library opened, exported, closed",
            },
        }
        print(
            f"  store {size / 1e6:,.0f} MB in {len(files)} transcripts; whole read "
            f"{results['whole_read_export']['p50_ms']:.0f} ms; one appended line: read "
            f"{results['appended_line_read']['p50_ms']:.0f} ms, export "
            f"{results['appended_line_export']['p50_ms']:.0f} ms, hook "
            f"{results['appended_line_hook']['p50_ms']:.0f} ms; to an older session: export "
            f"{results['appended_line_export_older_session']['p50_ms']:.0f} ms"
        )
    return write(
        "export_incremental",
        results,
        {"appended_line_export.p50_ms": 100, "appended_line_hook.p50_ms": 100},
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    doc = main()
    raise SystemExit(0 if doc["ok"] else 1)
