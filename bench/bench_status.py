"""Status benchmark (issue: the library reports its own health): ``memory_status`` in-process.

Library: 20 agents x 1,000 entities x 500 sessions (generated), with a staged write, a git
remote and a peer in peers.yaml (refused port: the tool must never call it), and the registered
readers looking at an empty home. The server runs in this process; the calls go through the MCP
client over the in-memory transport, so a round trip includes the guard, the audit line and the
JSON of the answer, as an agent's call would.
Target: memory_status p50 <= 5 ms once warm. Also reported, without a target: the first call
(reader plugins loaded, every agent counted and digested) and the first call after a commit,
split in two: the index reloading (which any tool's first call after a commit pays) and then
memory_status itself (the changed agent counted again, staging and remotes read again).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from common import summarize, write
from mcp import Client

from bourdon.federation.peers import Peer, PeerList
from bourdon.readers.base import ReaderContext
from bourdon.serve.server import create_server
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library
from bourdon.testing.serving import free_port

CALLS = 500
AFTER_COMMIT = 10


async def timed(client: Client, samples: list[float]) -> dict[str, Any]:
    start = time.perf_counter()
    result = await client.call_tool("memory_status", {})
    samples.append((time.perf_counter() - start) * 1000)
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"memory_status failed: {result.structured_content or result.content}")
    out: dict[str, Any] = result.structured_content
    return out


async def measure_status(root: Path, home: Path, library: Library) -> dict[str, Any]:
    server = create_server(
        root,
        watch=False,
        home=home / ".bourdon",
        reader_ctx=ReaderContext(home=home, machine="bench"),
    )
    first: list[float] = []
    warm: list[float] = []
    after_commit: list[float] = []
    reloads: list[float] = []
    index = server.bourdon_index  # type: ignore[attr-defined]
    async with Client(server, mode="legacy") as client:
        report = await timed(client, first)
        if report["agents"]["count"] != 20 or report["staging"]["waiting"] != 1:
            raise RuntimeError(f"unexpected report: {report['agents']['count']} agents")
        for _ in range(20):
            await timed(client, [])
        for _ in range(CALLS):
            await timed(client, warm)
        for n in range(AFTER_COMMIT):
            library.commit(
                "agent-00",
                {"notes": [{"date": "2026-11-30", "text": f"bench note {n}"}]},
                provenance=Provenance(caller="bench"),
            )
            start = time.perf_counter()
            index.refresh()
            reloads.append((time.perf_counter() - start) * 1000)
            await timed(client, after_commit)
    return {
        "first_memory_status": summarize(first),
        "memory_status": summarize(warm),
        "index_reload_after_commit": summarize(reloads),
        "memory_status_after_commit": summarize(after_commit),
    }


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root, home = Path(tmp) / "lib", Path(tmp) / "home"
        start = time.perf_counter()
        library = make_large_library(root, agents=20, entities=1000, sessions=500)
        build_s = time.perf_counter() - start
        library.stage(
            "desk-chat",
            "agent-01",
            {"notes": [{"date": "2026-11-30", "text": "waiting for review"}]},
            Provenance(caller="desk-chat"),
        )
        run_git(root, "remote", "add", "origin", str(Path(tmp) / "origin.git"))
        PeerList(home / ".bourdon").add(Peer("desktop", f"http://127.0.0.1:{free_port()}/mcp"))
        results: dict[str, Any] = {
            "library": {
                "agents": 20,
                "entities_per_agent": 1000,
                "sessions_per_agent": 500,
                "build_s": round(build_s, 2),
            },
        }
        try:
            results.update(anyio.run(measure_status, root, home, library))
        finally:
            library.close()
    return write("status", results, {"memory_status.p50_ms": 5.0})


if __name__ == "__main__":
    main()
