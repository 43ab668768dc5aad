"""Write-tools benchmark (issue: history and rollback over MCP): commit, rollback, versions.

Library: 20 agents x 1,000 entities x 500 sessions (generated). One `bourdon serve` subprocess,
one MCP client over stdio, one writer: the latencies are round trips as an agent sees them.
Targets: commit_to_federation p50 <= 30 ms (a typical write: update one existing entity's
summary and add a note), rollback_agent_memory with confirm=true p50 <= 40 ms (alternating
between two versions of one agent), list_memory_versions(limit=20) p50 <= 15 ms.
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from common import summarize, write
from mcp import Client, StdioServerParameters

from bourdon.store.library import Library
from bourdon.testing import make_large_library

COMMITS = 200
ROLLBACKS = 50
VERSION_LISTS = 200


async def answer(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{tool} failed: {result.structured_content or result.content}")
    out: dict[str, Any] = result.structured_content
    return out


async def timed(client: Client, tool: str, args: dict[str, Any], samples: list[float]) -> dict:
    start = time.perf_counter()
    out = await answer(client, tool, args)
    samples.append((time.perf_counter() - start) * 1000)
    return out


async def over_stdio(root: Path, entities: dict[str, list[str]]) -> dict[str, Any]:
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve"],
        env={"HOME": str(home), "BOURDON_HOME": str(home / ".bourdon")},
    )
    rng = random.Random(11)
    agents = sorted(entities)
    counter = itertools.count()

    def change() -> dict[str, Any]:
        # A typical write: refresh what is known of one entity and add a note.
        n = next(counter)
        agent = rng.choice(agents)
        return {
            "agent_id": agent,
            "entities": [{"name": entities[agent][n % 1000], "summary": f"Updated by write {n}."}],
            "notes": [{"date": "2026-11-30", "text": f"bench note {n}"}],
            "session_id": f"bench-{n}",
        }

    commits: list[float] = []
    rollbacks: list[float] = []
    versions: list[float] = []
    warm: list[float] = []
    async with Client(params, mode="legacy") as c:
        for _ in range(5):
            await timed(c, "commit_to_federation", change(), warm)
        for _ in range(COMMITS):
            await timed(c, "commit_to_federation", change(), commits)

        # Two versions of one agent to alternate between: each rollback restores the other.
        target = agents[0]
        first = await answer(
            c,
            "commit_to_federation",
            {"agent_id": target, "notes": [{"date": "2026-11-30", "text": "rollback state A"}]},
        )
        second = await answer(
            c,
            "commit_to_federation",
            {"agent_id": target, "notes": [{"date": "2026-11-30", "text": "rollback state B"}]},
        )
        pair = [first["version_id"], second["version_id"]]
        for i in range(ROLLBACKS + 2):
            out = await timed(
                c,
                "rollback_agent_memory",
                {"agent_id": target, "version_id": pair[i % 2], "confirm": True},
                rollbacks if i >= 2 else warm,
            )
            if not out.get("rolled_back"):
                raise RuntimeError(f"rollback {i} restored nothing: {out}")

        busy = agents[1]
        for i in range(VERSION_LISTS + 5):
            out = await timed(
                c,
                "list_memory_versions",
                {"agent_id": rng.choice(agents) if i % 2 else busy, "limit": 20},
                versions if i >= 5 else warm,
            )
            if not out["versions"]:
                raise RuntimeError(f"list_memory_versions answered no versions: {out}")
    return {
        "stdio_commit_to_federation": summarize(commits),
        "stdio_rollback_confirm": summarize(rollbacks),
        "stdio_list_memory_versions_20": summarize(versions),
    }


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root = Path(tmp) / "lib"
        start = time.perf_counter()
        make_large_library(root, agents=20, entities=1000, sessions=500).close()
        build_s = time.perf_counter() - start
        with Library.open(root) as library:
            entities = {
                agent: [row["name"] for row in library.read(agent).rows("known_entities")]
                for agent in library.agent_ids()
            }
        results: dict[str, Any] = {
            "library": {
                "agents": len(entities),
                "entities_per_agent": 1000,
                "sessions_per_agent": 500,
                "build_s": round(build_s, 2),
            },
        }
        results.update(anyio.run(over_stdio, root, entities))
        with Library.open(root) as library:
            clean, said = library.fsck()
        if not clean:
            raise RuntimeError(f"git fsck failed after the benchmark: {said}")
    return write(
        "writes",
        results,
        {
            "stdio_commit_to_federation.p50_ms": 30,
            "stdio_rollback_confirm.p50_ms": 40,
            "stdio_list_memory_versions_20.p50_ms": 15,
        },
    )


if __name__ == "__main__":
    main()
