"""Freshness benchmark: what a caller pays right after a write, not only when all is warm.

Library: 20 agents x 1,000 entities x 500 sessions, served by `bourdon serve --transport http`
(a real process, its file watcher on) to two members over streamable HTTP on 127.0.0.1. A
"writer" commits to one agent through commit_to_federation, as agents do at the end of a
session; a "reader" calls the read tools.

- warm: recognition and find_entity p50 with nothing changing;
- right after a commit: the reader's first call after each acknowledged commit (targets:
  p50 <= 3x the warm p50, for recognition and for find_entity);
- during a stream of 20 commits: the reader calling recognition in a loop meanwhile (p99);
- another process's write (the CLI, an export hook): time until the server serves it, with
  the watcher on.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from common import summarize, write
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.testing import make_large_library
from bourdon.testing.serving import (
    bearer_client,
    child_env,
    free_port,
    stop_process,
    wait_for_port,
)

WARM_RUNS = 200
AFTER_COMMITS = 30
STREAM_COMMITS = 20
WRITER_AGENT = "agent-05"
FILLER = ("please look at the failing tests and tell me what changed since yesterday in the "
          "build scripts and the deployment notes before we ship").split()


def prompt(names: list[str], rng: random.Random) -> str:
    words = [rng.choice(FILLER) for _ in range(200)]
    for _ in range(6):
        words[rng.randrange(200)] = rng.choice(names)
    return " ".join(words)


async def timed(client: Client, tool: str, args: dict[str, Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    answer = await client.call_tool(tool, args)
    elapsed = (time.perf_counter() - start) * 1000
    if answer.is_error:
        raise RuntimeError(f"{tool} failed: {answer.structured_content}")
    return elapsed, answer.structured_content


def visible_names(root: Path, agent: str) -> list[str]:
    rows = yamlio.load((root / "agents" / f"{agent}.l5.yaml").read_bytes())["known_entities"]
    return [row["name"] for row in rows if row.get("visibility") != "private"]


async def measure_all(url: str, tokens: dict[str, str], root: Path, names: list[str]) -> dict:
    mine, mine_6 = visible_names(root, WRITER_AGENT), visible_names(root, "agent-06")
    rng = random.Random(7)
    texts = [prompt(names, rng) for _ in range(50)]
    recognise = "prepare_recognition_context"
    out: dict[str, Any] = {}
    async with (
        bearer_client(url, tokens["writer"]) as writer,
        bearer_client(url, tokens["reader"]) as reader,
    ):
        for text in texts[:10]:  # the first calls build the reader's recognizer
            await timed(reader, recognise, {"prompt": text})
        warm_r = [(await timed(reader, recognise, {"prompt": texts[i % 50]}))[0]
                  for i in range(WARM_RUNS)]
        warm_f = [(await timed(reader, "find_entity", {"name": names[i]}))[0]
                  for i in range(WARM_RUNS)]
        out["warm_recognition"] = summarize(warm_r)
        out["warm_find_entity"] = summarize(warm_f)

        # The writer's agent is full (1,000 rows): each commit updates one of its entities.
        after_r, after_f, commits = [], [], []
        for i in range(AFTER_COMMITS):
            target = mine[i % len(mine)]
            ms, _ = await timed(writer, "commit_to_federation", {
                "agent_id": WRITER_AGENT,
                "entities": [{"name": target, "summary": f"recognised update {i}"}]})
            commits.append(ms)
            ms, answer = await timed(reader, recognise, {"prompt": f"is {target} up? "
                                                         + texts[i % 50]})
            if target not in {m["name"] for m in answer["matched_entities"]}:
                raise RuntimeError(f"recognition missed {target}")
            after_r.append(ms)
            target = mine[-1 - i % len(mine)]
            ms, _ = await timed(writer, "commit_to_federation", {
                "agent_id": WRITER_AGENT,
                "entities": [{"name": target, "summary": f"found update {i}"}]})
            commits.append(ms)
            ms, answer = await timed(reader, "find_entity",
                                     {"name": target, "access_level": "team"})
            if f"found update {i}" not in str(answer):
                raise RuntimeError("find_entity did not serve the acknowledged commit")
            after_f.append(ms)
        out["recognition_after_commit"] = summarize(after_r)
        out["find_entity_after_commit"] = summarize(after_f)
        out["commit_over_http"] = summarize(commits)
        for key, warm in (("recognition_after_commit", "warm_recognition"),
                          ("find_entity_after_commit", "warm_find_entity")):
            out[key]["p50_to_warm_p50"] = round(out[key]["p50_ms"] / out[warm]["p50_ms"], 2)

        during: list[float] = []
        done = False

        async def read_loop() -> None:
            i = 0
            while not done:
                during.append((await timed(reader, recognise, {"prompt": texts[i % 50]}))[0])
                i += 1

        async def write_stream() -> None:
            nonlocal done
            for i in range(STREAM_COMMITS):
                await timed(writer, "commit_to_federation", {
                    "agent_id": WRITER_AGENT,
                    "entities": [{"name": mine[i % len(mine)], "summary": f"stream {i}"}]})
            done = True

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_loop)
            tg.start_soon(write_stream)
        out["recognition_during_20_commits"] = summarize(during)

        # Another process writes (a hook's export): how soon is it served?
        visible = []
        for i in range(5):
            with Library.open(root) as library:
                start = time.perf_counter()
                row = {"name": mine_6[i], "aliases": [f"outside{i}x"]}
                library.commit("agent-06", {"known_entities": [row]})
            while True:
                _, answer = await timed(reader, recognise, {"prompt": f"outside{i}x status"})
                if answer["matched_entities"]:
                    break
                await anyio.sleep(0.005)
            visible.append((time.perf_counter() - start) * 1000)
        out["external_write_visible"] = summarize(visible)
    return out


def in_process(root: Path, names: list[str]) -> dict[str, Any]:
    """The same, without a transport: the first recognition and find after one agent's commit
    (the rebuild itself, paid by the writer's thread, is reported apart)."""
    from bourdon.query import context
    from bourdon.query.index import Index

    index = Index(root)
    index.refresh()
    index.warm()
    rng = random.Random(11)
    texts = [prompt(names, rng) for _ in range(50)]
    for text in texts:
        context.prepare_recognition_context(index, text)
    warm_r, warm_f, after_r, after_f, rebuild = [], [], [], [], []
    for i in range(200):
        start = time.perf_counter()
        context.prepare_recognition_context(index, texts[i % 50])
        warm_r.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        index.match(names[i], visible=lambda row: row.visibility <= 1)
        warm_f.append((time.perf_counter() - start) * 1000)
    mine = visible_names(root, WRITER_AGENT)
    with Library.open(root) as library:
        for i in range(AFTER_COMMITS):
            library.commit(WRITER_AGENT, {"known_entities": [
                {"name": mine[i], "summary": f"in-process update {i}"}]})
            start = time.perf_counter()
            index.refresh()
            rebuild.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            context.prepare_recognition_context(index, texts[i % 50])
            after_r.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            index.match(mine[-1 - i], visible=lambda row: row.visibility <= 1)
            after_f.append((time.perf_counter() - start) * 1000)
    out = {
        "inprocess_warm_recognition": summarize(warm_r),
        "inprocess_recognition_after_commit": summarize(after_r),
        "inprocess_warm_find": summarize(warm_f),
        "inprocess_find_after_commit": summarize(after_f),
        "inprocess_rebuild_one_agent": summarize(rebuild),
    }
    for key, warm in (("inprocess_recognition_after_commit", "inprocess_warm_recognition"),
                      ("inprocess_find_after_commit", "inprocess_warm_find")):
        out[key]["p50_to_warm_p50"] = round(out[key]["p50_ms"] / out[warm]["p50_ms"], 2)
    return out


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "lib"
        print("  building the 20 x 1,000 library ...", flush=True)
        make_large_library(root).close()
        from bourdon.query.index import Index

        index = Index(root)
        index.refresh()
        names = [row.name for row in index.entity_rows]
        del index
        print("  in process ...", flush=True)
        results_inprocess = in_process(root, names)
        user = base / "user"
        registry = MemberRegistry(user / ".bourdon")
        tokens = {name: registry.add(name, tier="trusted") for name in ("writer", "reader")}
        port = free_port()
        log = base / "serve.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bourdon", "--library", str(root), "serve",
                 "--transport", "http", "--port", str(port)],
                env={**child_env(user), "PYTHONPATH": os.pathsep.join(sys.path)},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            )
        try:
            wait_for_port(proc, port, timeout=120, log=log)
            results = anyio.run(measure_all, f"http://127.0.0.1:{port}/mcp", tokens, root, names)
        finally:
            stop_process(proc)
    results.update(results_inprocess)
    results["library"] = {"agents": 20, "entities": 20_000, "sessions": 10_000}
    return write(
        "freshness",
        results,
        {
            "recognition_after_commit.p50_to_warm_p50": 3.0,
            "find_entity_after_commit.p50_to_warm_p50": 3.0,
            "inprocess_recognition_after_commit.p50_to_warm_p50": 3.0,
            "inprocess_find_after_commit.p50_to_warm_p50": 3.0,
        },
    )


if __name__ == "__main__":
    main()
