"""Freshness: a write is served at once, rebuilds only its agent's part, and holds up no one.

The index answers from one snapshot and swaps in the next one whole. These tests hold a
rebuild part-way (the refresh thread waits on an event the test sets) to show that other
callers are answered meanwhile, from the previous state; and, over real HTTP with a real
server process, that every answer is either before or after a commit, in order, and that a
commit acknowledged to one client is seen by the next call of any other.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.query.agentpart import AgentPart
from bourdon.query.index import Index
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.testing import manifest
from tests.support.served import HttpServer, member

pytestmark = pytest.mark.anyio

# Names no English word is near, so recognition finds them in any position.
NEW_NAMES = ["Zorvexa", "Quillmarsh", "Brontavix", "Yelmorith", "Drakkelun"]
HANG_GUARD = 120.0  # seconds: only stops a test that hangs; never a timing assertion


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _agents(count: int, entities: int) -> list[dict[str, Any]]:
    return [
        manifest(
            f"agent-{n:02d}",
            known_entities=[
                {"name": f"component-{n}-{i}", "type": "project", "aliases": [f"c{n}x{i}"]}
                for i in range(entities)
            ],
        )
        for n in range(count)
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    library = Library.init(tmp_path / "lib")
    for data in _agents(6, 40):
        library.import_manifest(yamlio.dump(data))
    library.close()
    return tmp_path / "lib"


def _names(answer: Any) -> set[str]:
    data = answer.structured_content
    assert data is not None and not answer.is_error, answer
    return {m["name"] for m in data["matched_entities"]}


async def _recognise(client: Client, prompt: str) -> set[str]:
    return _names(await client.call_tool("prepare_recognition_context", {"prompt": prompt}))


def test_a_change_to_one_agent_rebuilds_only_its_part(root: Path) -> None:
    index = Index(root)
    index.refresh()
    before = dict(index.state.parts)
    index.recognizer_for(1, None)  # a caller used team-level recognition
    with Library.open(root) as library:
        library.import_manifest(
            yamlio.dump(
                manifest("agent-03", known_entities=[{"name": "Zorvexa", "type": "service"}])
            )
        )
    assert index.refresh() is True
    after = index.state.parts
    assert set(after) == set(before)
    rebuilt = [agent for agent in after if after[agent] is not before[agent]]
    assert rebuilt == ["agent-03"], "only the changed agent's part is built again"
    assert [r.name for r in index.agents["agent-03"].entities] == ["Zorvexa"]
    # The recognizer the caller used was made before the swap, over the new parts.
    assert (1, None) in index.state._recognizers
    found = index.recognizer_for(1, None).mentions("ask Zorvexa about component-1-7")
    assert {m.phrase for m in found} == {"zorvexa", "component 1 7"}


class _HeldRebuild:
    """Holds every refresh thread inside its rebuild until ``release``: a part is built, but
    the new snapshot is not swapped in while held."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()
        warm = AgentPart.warm

        def held(part: AgentPart, level: int, day: str) -> None:
            self.entered.set()
            if not self.go.wait(HANG_GUARD):
                raise AssertionError("the test never released the rebuild")
            warm(part, level, day)

        monkeypatch.setattr(AgentPart, "warm", held)

    def release(self) -> None:
        self.go.set()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[_HeldRebuild]:
    hold = _HeldRebuild(monkeypatch)
    yield hold
    hold.release()


async def test_turn_start_calls_are_answered_while_a_commit_rebuilds(
    root: Path, tmp_path: Path, held: _HeldRebuild
) -> None:
    prompt = "did Zorvexa break component-2-3 again?"
    server = create_server(root, watch=False, home=tmp_path / "home", peers_file=False)
    async with Client(server) as writer, Client(server) as reader:
        assert await _recognise(reader, prompt) == {"component-2-3"}
        committed: dict[str, Any] = {}

        async def commit() -> None:
            committed["answer"] = await writer.call_tool(
                "commit_to_federation",
                {"agent_id": "agent-01", "entities": [{"name": "Zorvexa", "type": "service"}]},
            )

        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(commit)
                await anyio.to_thread.run_sync(held.entered.wait, HANG_GUARD)
                # The commit is written and its rebuild is under way: the reader is still
                # answered, from the state before it, as many times as it asks.
                for _ in range(5):
                    assert await _recognise(reader, prompt) == {"component-2-3"}
                assert "answer" not in committed, "the write answered before its rebuild"
                held.release()
        assert not committed["answer"].is_error
        # The writer was answered after the swap: the next call of anyone sees the write.
        assert await _recognise(reader, prompt) == {"component-2-3", "Zorvexa"}


async def test_a_write_from_another_process_is_rebuilt_in_the_background(
    root: Path, tmp_path: Path, held: _HeldRebuild
) -> None:
    prompt = "Quillmarsh keeps failing"
    server = create_server(root, watch=False, home=tmp_path / "home", peers_file=False)
    index: Index = server.bourdon_index  # type: ignore[attr-defined]
    async with Client(server) as client:
        assert await _recognise(client, prompt) == set()
        with Library.open(root) as library:  # another process's write: the CLI, a hook
            library.import_manifest(
                yamlio.dump(
                    manifest("agent-04", known_entities=[{"name": "Quillmarsh", "type": "tool"}])
                )
            )
        index.mark_dirty()  # what the file watcher does on the change
        with anyio.fail_after(HANG_GUARD):
            await anyio.to_thread.run_sync(held.entered.wait, HANG_GUARD)
            # Turn-start calls do not wait for the rebuild they did not ask for.
            assert await _recognise(client, prompt) == set()
            held.release()
            # A call that reads the index waits for a change made before it arrived.
            found = await client.call_tool(
                "find_entity", {"name": "Quillmarsh", "access_level": "team"}
            )
        assert [m["name"] for m in found.structured_content["matches"]] == ["Quillmarsh"]
        assert await _recognise(client, prompt) == {"Quillmarsh"}


# -- over HTTP, a real server process, a 20 x 1,000 library --------------------------------


@pytest.fixture(scope="module")
def large_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    from bourdon.testing import make_large_library

    base = tmp_path_factory.mktemp("fresh")
    make_large_library(base / "lib").close()
    server = HttpServer(base / "lib", base / "user")
    registry = MemberRegistry(server.home)
    for name in ("writer", "reader"):
        server.tokens[name] = registry.add(name, tier="trusted")
    server.start()
    server.wait()
    yield server
    server.stop()


@pytest.fixture
async def two_members(large_server: HttpServer) -> AsyncIterator[tuple[Client, Client]]:
    async with member(large_server, "writer") as writer, member(large_server, "reader") as reader:
        yield writer, reader


async def test_a_reader_over_http_sees_each_commit_in_order_and_once_acknowledged(
    large_server: HttpServer, two_members: tuple[Client, Client]
) -> None:
    writer, reader = two_members
    prompt = "status of " + ", ".join(NEW_NAMES) + " please"
    # Each commit gives one of agent-07's entities (a full agent: 1,000 rows) a new alias;
    # the reader, a trusted member, reads at level team.
    rows = yamlio.load((large_server.root / "agents" / "agent-07.l5.yaml").read_bytes())
    shown = [row["name"] for row in rows["known_entities"] if row["visibility"] != "private"]
    targets = shown[: len(NEW_NAMES)]
    seen: list[tuple[int, set[str]]] = []  # (commits acknowledged when the call was sent, names)
    acknowledged = 0
    done = False
    caught_up = anyio.Event()  # the reader answered a call sent after the last acknowledgement

    async def read_in_a_loop() -> None:
        nonlocal caught_up
        while not done:
            sent_after = acknowledged
            names = await _recognise(reader, prompt)
            seen.append((sent_after, names & set(targets)))
            if sent_after == acknowledged:
                caught_up.set()

    async def commit_each() -> None:
        nonlocal acknowledged, done, caught_up
        for alias, name in zip(NEW_NAMES, targets, strict=True):
            answer = await writer.call_tool(
                "commit_to_federation",
                {"agent_id": "agent-07", "entities": [{"name": name, "aliases": [alias]}]},
            )
            assert not answer.is_error, answer
            caught_up = anyio.Event()
            acknowledged += 1
            await caught_up.wait()  # the reader gets a call in after every acknowledgement
        done = True

    with anyio.fail_after(HANG_GUARD * 3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_in_a_loop)
            tg.start_soon(commit_each)

    assert len(seen) > len(NEW_NAMES)
    previous: set[str] = set()
    for sent_after, names in seen:
        # In order: what was seen once stays seen, and names appear in commit order.
        assert previous <= names, (previous, names)
        assert names == set(targets[: len(names)]), names
        # Acknowledged means served: a call sent after k acknowledgements sees all k.
        assert set(targets[:sent_after]) <= names, (sent_after, names)
        previous = names
    assert previous == set(targets)
