"""Recognition benchmark (issue: turn-start recognition and peers).

Library: 20 agents x 1,000 entities x 500 sessions. Targets: recognition of a 200-word prompt
in-process p50 <= 0.5 ms; over MCP stdio p50 <= 3 ms; with one hung peer, recognition p99 <=
250 ms; an index of 100,000 entities still answers in p50 <= 1 ms. Composed of one name table
per agent (at level team): merging the tables costs <= 15% of building them, and the first
prompt after one agent's table changed costs <= 2x a warm one.
"""

from __future__ import annotations

import random
import socket
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import anyio
from common import measure, summarize, write
from mcp import Client, StdioServerParameters

from bourdon.federation.peers import Peer
from bourdon.query import context
from bourdon.query.index import Index
from bourdon.query.recognition import NameTable, Recognizer
from bourdon.serve.server import create_server
from bourdon.testing import make_large_library

FILLER = ("please look at the failing tests and tell me what changed since yesterday in the "
          "build scripts and the deployment notes before we ship").split()


def prompts(index: Index, count: int, rng: random.Random) -> list[str]:
    names = [row.name for row in index.entity_rows]
    out = []
    for _ in range(count):
        words = [rng.choice(FILLER) for _ in range(200)]
        for _ in range(6):  # a few real mentions, one with a typo
            words[rng.randrange(200)] = rng.choice(names)
        name = rng.choice(names)
        words[rng.randrange(200)] = name[:3] + name[4:] if len(name) > 6 else name
        out.append(" ".join(words))
    return out


def composition(index: Index, texts: list[str]) -> dict:
    """Name tables per agent at level team: build, merge, warm prompts, a change of one."""
    names: dict[str, list] = defaultdict(list)
    for i, row in enumerate(index.entity_rows):
        if row.visibility <= 1:
            for text, is_alias in ((row.name, False), *((a, True) for a in row.aliases)):
                names[row.agent].append((i, text, is_alias, row.name, row.type or "topic"))
    start = time.perf_counter()
    tables = {agent: NameTable.build(rows) for agent, rows in sorted(names.items())}
    build_ms = (time.perf_counter() - start) * 1000
    merges = []
    for _ in range(5):
        start = time.perf_counter()
        warm = Recognizer(list(tables.values()))
        merges.append((time.perf_counter() - start) * 1000)
    loop = iter(texts * 10)
    warm_run = measure(lambda: warm.mentions(next(loop)), runs=2000, warmup=400)
    agent = sorted(names)[len(names) // 2]
    changed = list(names[agent])
    key, text, is_alias, entity, kind = changed[0]
    changed[0] = (key, f"zephyrine-{text}", is_alias, f"zephyrine-{entity}", kind)
    start = time.perf_counter()
    tables[agent] = NameTable.build(changed)
    one_ms = (time.perf_counter() - start) * 1000
    firsts = []
    for text in texts[:100]:  # prompts the warm recognizer has seen, as the last turns were
        fresh = Recognizer(list(tables.values()), previous=warm)
        start = time.perf_counter()
        fresh.mentions(text)
        firsts.append((time.perf_counter() - start) * 1000)
    first = summarize(firsts)
    return {
        "tables": len(tables),
        "names": sum(len(rows) for rows in names.values()),
        "build_ms": round(build_ms, 1),
        "one_table_ms": round(one_ms, 1),
        "merge_ms": round(min(merges), 1),
        "merge_share": round(min(merges) / build_ms, 3),
        "warm_p50_ms": warm_run["p50_ms"],
        "first_after_change_p50_ms": first["p50_ms"],
        "first_after_change_ratio": round(first["p50_ms"] / warm_run["p50_ms"], 2),
    }


def hung_peer() -> tuple[str, threading.Event]:
    """A peer that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    stop = threading.Event()
    held: list[socket.socket] = []

    def run() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue
        for conn in held:
            conn.close()
        server.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/mcp", stop


async def with_hung_peer(root: Path, texts: list[str]) -> dict:
    url, stop = hung_peer()
    server = create_server(root, watch=False, home=root.parent / "home-a",
                           peers=[Peer("asleep", url)])
    samples = []
    try:
        async with Client(server) as c:
            for text in texts[60:65]:  # warm up: the first call builds the recognizer
                await c.call_tool("prepare_recognition_context", {"prompt": text})
            for text in texts[:60]:
                start = time.perf_counter()
                await c.call_tool("prepare_recognition_context", {"prompt": text})
                samples.append((time.perf_counter() - start) * 1000)
    finally:
        stop.set()
    return summarize(samples)


async def over_stdio(root: Path, texts: list[str]) -> dict:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "bourdon", "--library", str(root), "serve"],
                                   env={"HOME": str(root.parent)})
    samples = []
    async with Client(params, mode="legacy") as c:
        for text in texts[:20]:
            await c.call_tool("prepare_recognition_context", {"prompt": text})
        for text in texts[:300]:
            start = time.perf_counter()
            await c.call_tool("prepare_recognition_context", {"prompt": text})
            samples.append((time.perf_counter() - start) * 1000)
    return summarize(samples)


def main() -> dict:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root = Path(tmp) / "lib"
        make_large_library(root).close()
        index = Index(root)
        index.refresh()
        texts = prompts(index, 400, rng)
        loop = iter(texts * 20)
        results = {
            "library": {"entities": len(index.entity_rows), "prompt_words": 200},
            "inprocess_recognition": measure(
                lambda: context.prepare_recognition_context(index, next(loop)), runs=2000,
                warmup=50),
        }
        results["composition"] = composition(index, texts)
        results["stdio_recognition"] = anyio.run(over_stdio, root, texts)
        results["hung_peer_recognition"] = anyio.run(with_hung_peer, root, texts)

        big = Path(tmp) / "big"
        make_large_library(big, agents=100, entities=1000, sessions=5, seed=3).close()
        big_index = Index(big)
        start = time.perf_counter()
        big_index.refresh()
        load_s = time.perf_counter() - start
        big_texts = iter(prompts(big_index, 200, rng) * 20)
        results["recognition_100k"] = measure(
            lambda: context.prepare_recognition_context(big_index, next(big_texts)), runs=1000,
            warmup=20)
        results["recognition_100k"]["entities"] = len(big_index.entity_rows)
        results["recognition_100k"]["index_load_s"] = round(load_s, 2)
    return write("recognition", results, {
        "inprocess_recognition.p50_ms": 0.5,
        "stdio_recognition.p50_ms": 3.0,
        "hung_peer_recognition.p99_ms": 250,
        "recognition_100k.p50_ms": 1.0,
        "composition.merge_share": 0.15,
        "composition.warm_p50_ms": 0.5,
        "composition.first_after_change_ratio": 2.0,
    })


if __name__ == "__main__":
    main()
