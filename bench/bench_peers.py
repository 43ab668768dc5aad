"""Peer deadline benchmark (issue 13: timing goals leave the test suite for ``make bench``).

A server in this process (the sample library) asks two dead peers: one refuses connections
(nothing listens on its port) and one is a black hole (a socket that listens but never
accepts, so a request is never answered). Through the MCP client over the in-memory transport,
as an agent's call:

- 200 ``prepare_recognition_context`` calls with the default 0.2 s recognition deadline;
- 20 ``find_entity`` calls with a 0.5 s peer deadline;

both with back-off off (every call asks the dead peers, so every call pays the deadline), and

- 50 consecutive ``find_entity`` calls with one hung peer (the black hole), the default 5 s
  deadline and the default back-off (1 s, doubling to 60 s): the total wall time, each call's
  p50 and p99, and how many calls paid the deadline.

Targets (what ``tests/test_peers.py`` asserted before): recognition p99 <= 300 ms (the deadline
plus 100 ms), find_entity p99 <= 600 ms (the deadline plus 100 ms); with back-off, at most one
of the 50 calls pays the deadline and their p50 stays under 50 ms. The tests check that the
dead peers are given up at the deadline in every answer and skipped once backed off; this
measures how long that takes.
"""

from __future__ import annotations

import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from common import summarize, write
from mcp import Client

from bourdon.federation.backoff import Backoff
from bourdon.federation.peers import Peer
from bourdon.serve.server import create_server
from bourdon.testing import make_library
from bourdon.testing.serving import free_port

RECOGNITION_CALLS = 200
FIND_CALLS = 20
HUNG_CALLS = 50


async def timed(client: Client, tool: str, args: dict[str, Any], samples: list[float]) -> None:
    start = time.perf_counter()
    result = await client.call_tool(tool, args)
    samples.append((time.perf_counter() - start) * 1000)
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{tool} failed: {result.structured_content or result.content}")
    if result.structured_content.get("peers_timed_out", 0) < 1:
        raise RuntimeError(f"{tool}: the black hole was not given up: {result.structured_content}")


async def measure(root: Path, home: Path, peers: list[Peer]) -> dict[str, Any]:
    recognition: list[float] = []
    found: list[float] = []
    server = create_server(
        root, watch=False, home=home, peers=peers, deadlines=(0.2, 0.5), peer_backoff=Backoff(0)
    )
    async with Client(server) as client:
        prompt = {"prompt": "is ledgerline related to bourdon?"}
        await timed(client, "prepare_recognition_context", prompt, [])  # warm-up
        for _ in range(RECOGNITION_CALLS):
            await timed(client, "prepare_recognition_context", prompt, recognition)
        await timed(client, "find_entity", {"name": "bourdon"}, [])
        for _ in range(FIND_CALLS):
            await timed(client, "find_entity", {"name": "bourdon"}, found)
    return {
        "recognition_with_dead_peers": summarize(recognition),
        "find_entity_with_dead_peers": summarize(found),
        "find_entity_with_a_hung_peer_backed_off": await backed_off(root, home, peers[1]),
    }


async def backed_off(root: Path, home: Path, hung: Peer) -> dict[str, Any]:
    """50 find_entity calls in a row with one hung peer, default deadline and back-off."""
    server = create_server(root, watch=False, home=home, peers=[hung])
    samples: list[float] = []
    paid = skipped = 0
    async with Client(server) as client:
        await client.call_tool("list_agents", {"federation_hop": 1})  # warm-up, local only
        start = time.perf_counter()
        for _ in range(HUNG_CALLS):
            began = time.perf_counter()
            result = await client.call_tool("find_entity", {"name": "bourdon"})
            samples.append((time.perf_counter() - began) * 1000)
            answer = result.structured_content or {}
            if not answer.get("matches"):
                raise RuntimeError(f"find_entity lost its local rows: {answer}")
            paid += answer.get("peers_timed_out", 0)
            skipped += hung.name in answer.get("peers_skipped", [])
        total = time.perf_counter() - start
    return {
        **summarize(samples),
        "total_s": round(total, 3),
        "paid_deadline": paid,
        "skipped": skipped,
    }


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp, socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(1024)  # never accepted: connections complete, requests are never answered
        peers = [
            Peer("refuse", f"http://127.0.0.1:{free_port()}/mcp"),
            Peer("blackhole", f"http://127.0.0.1:{hole.getsockname()[1]}/mcp"),
        ]
        root = Path(tmp) / "lib"
        make_library(root).close()
        results = anyio.run(measure, root, Path(tmp) / "home", peers)
    return write(
        "peers",
        results,
        {
            "recognition_with_dead_peers.p99_ms": 300.0,
            "find_entity_with_dead_peers.p99_ms": 600.0,
            "find_entity_with_a_hung_peer_backed_off.paid_deadline": 1,
            "find_entity_with_a_hung_peer_backed_off.p50_ms": 50.0,
        },
    )


if __name__ == "__main__":
    main()
