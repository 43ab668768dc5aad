"""Recognition is built ahead once the server is idle, never while a call waits for its answer."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.model import Visibility
from bourdon.query.index import Index
from bourdon.serve.server import create_server
from bourdon.serve.warmup import IdleWarmup
from bourdon.store import manifestcache
from bourdon.testing import make_library


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_warmup_waits_for_the_request_in_flight_then_runs_once() -> None:
    order: list[str] = []
    warmed = threading.Event()
    warmup = IdleWarmup(lambda: (order.append("warm-up"), warmed.set()), quiet=0.01)
    answer = anyio.Event()

    async def handler(_ctx: Any) -> str:
        order.append("request")
        await answer.wait()  # in flight until the test lets it answer
        order.append("answered")
        return "ok"

    async with anyio.create_task_group() as group:
        group.start_soon(warmup, None, handler)
        while order != ["request"]:
            await anyio.sleep(0)  # let the request start (a yield, not a wait for time)
        warmup.start()
        warmup.start()  # a second start does not warm up twice
        # Twenty quiet periods pass with the request in flight: no warm-up meanwhile.
        assert not await anyio.to_thread.run_sync(warmed.wait, 0.2)
        answer.set()
    assert await anyio.to_thread.run_sync(warmed.wait, 10)
    assert order == ["request", "answered", "warm-up"]


@pytest.mark.anyio
async def test_the_server_builds_turn_start_recognition_after_its_first_answer(
    tmp_path: Path,
) -> None:
    library = make_library(tmp_path / "lib")
    index = Index(library.root)
    built = threading.Event()
    real = index.recognizer_for

    def recognizer_for(level: int, agents: frozenset[str] | None) -> Any:
        found = real(level, agents)
        if (level, agents) == (int(Visibility.TEAM), None):
            built.set()
        return found

    index.recognizer_for = recognizer_for  # type: ignore[method-assign]
    server = create_server(library.root, index=index, watch=False, home=tmp_path / "home")
    async with Client(server) as client:
        result = await client.call_tool("find_entity", {"name": "bourdon"})
        assert not result.is_error
        assert await anyio.to_thread.run_sync(built.wait, 10)


@pytest.mark.anyio
async def test_a_cold_start_writes_the_cache_once_idle_and_writes_the_next_entries_at_once(
    tmp_path: Path,
) -> None:
    library = make_library(tmp_path / "lib")
    cache = library.root / ".bourdon" / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    manifestcache._RECENT.clear()  # what this process wrote lately would be read from memory
    server = create_server(library.root, watch=False, home=tmp_path / "home")
    index = server.bourdon_index  # type: ignore[attr-defined]
    agents = len(index.agents)
    assert agents and not list(cache.rglob("*.json"))  # parsed, not yet written
    async with Client(server) as client:
        assert not (await client.call_tool("find_entity", {"name": "bourdon"})).is_error
    # Leaving the server writes whatever the warm-up had not written yet.
    assert len(list(cache.rglob("*.json"))) == agents
    assert not index.cache.deferred
