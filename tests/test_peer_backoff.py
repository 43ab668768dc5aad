"""A dead peer costs its deadline once per back-off window, and no peer can hold a call longer.

Real parts: the server in-process (``mcp.Client(create_server(...))``) with the sample
library; peers that misbehave at every stage of a call (``peers_misbehaving.py``: raw sockets
on 127.0.0.1 in threads), a closed port, and a real ``bourdon serve --transport http`` that
comes up on a hung peer's port. Time is the back-off's injected clock, moved by the test; no
duration is asserted (``anyio.fail_after`` only guards against a hang).

1. whatever a peer does (never answers, stalls after its headers, trickles an SSE stream,
   hangs after ``initialize``, closes mid-answer, refuses), every federated tool reports it
   timed out or failed and answers with its local rows intact, leaving no task or socket;
2. what backs a peer off (a timeout, a transport failure, a bad status, an answer over the
   cap) and what does not (a tool error: the peer is alive);
3. with a hung peer and a long window, 50 calls ask it once; with a short window it is tried
   again after the window, one call (or thread) at a time, the window grows to its cap, and a
   peer that comes back is answered and its back-off reset; calls that time out together
   count as one failure;
4. ``bourdon serve`` refuses back-off values that make no sense.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import main as cli_main
from bourdon.federation.backoff import Backoff, PeerBackoff
from bourdon.federation.client import Federation, PeerAnswer
from bourdon.federation.peers import Peer
from bourdon.formats import yamlio
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library, manifest
from bourdon.testing.serving import free_port
from tests.peers_misbehaving import MisbehavingPeer
from tests.support.served import HttpServer

pytestmark = pytest.mark.anyio

GUARD = 60.0  # seconds: a hang guard only, far above any deadline here
OFF = Backoff(base=0)  # every call asks every peer: what the deadline alone does
SINCE = "2000-01-01"
PROMPT = "is ledgerline related to bourdon?"
QUERIES: dict[str, dict[str, Any]] = {
    "find_entity": {"name": "bourdon", "access_level": "team"},
    "list_agents": {},
    "list_recent_work": {"since": SINCE, "access_level": "team", "limit": 50},
    "get_cross_agent_summary": {"project": "bourdon", "access_level": "team"},
    "prepare_recognition_context": {"prompt": PROMPT},
}
ROWS = {  # what each federated tool answers from the library
    "find_entity": ("matches",),
    "list_agents": ("agents",),
    "list_recent_work": ("sessions",),
    "get_cross_agent_summary": ("agents", "entities", "recent_sessions"),
    "prepare_recognition_context": ("matched_entities", "prompt_context"),
}
HANGING = ("silent", "headers_then_stall", "sse_trickle", "init_then_hang")
FAILING = ("close_mid_stream", "close_mid_event", "refuse")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    make_library(root).close()
    return root


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def peer_of(behaviour: str) -> tuple[MisbehavingPeer | None, Peer]:
    if behaviour == "refuse":  # bound once, then closed: nothing listens there
        return None, Peer("refuse", f"http://127.0.0.1:{free_port()}/mcp")
    fake = MisbehavingPeer(behaviour)
    return fake, Peer(behaviour.replace("_", "-"), fake.url)


def sockets_to(port: int) -> int:
    """How many sockets of this process are connected to ``port`` on 127.0.0.1 (the client
    side: the fakes' own sockets have it as their local port)."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            link = str(fd.readlink())
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    count = 0
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].split(":")[1], 16)
            if remote_port == port and fields[9] in inodes:
                count += 1
    return count


def tasks() -> int:
    return len(asyncio.all_tasks())


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    answer: dict[str, Any] | None = result.structured_content
    assert answer is not None
    return answer


def rows(tool: str, answer: dict[str, Any]) -> dict[str, Any]:
    return {key: answer[key] for key in ROWS[tool]}


async def local_answers(lib: Path, home: Path) -> dict[str, dict[str, Any]]:
    """Each federated tool's rows from a server with no peer at all."""
    server = create_server(lib, watch=False, home=home, peers_file=False)
    async with Client(server) as client:
        return {tool: rows(tool, await call(client, tool, args)) for tool, args in QUERIES.items()}


# -- 1. bounded waits ----------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", [*HANGING, *FAILING])
async def test_whatever_a_peer_does_every_federated_tool_answers_with_its_local_rows(
    lib: Path, tmp_path: Path, behaviour: str
) -> None:
    expected = await local_answers(lib, tmp_path / "alone")
    fake, peer = peer_of(behaviour)
    port = int(peer.url.split(":")[2].split("/")[0])
    server = create_server(lib, watch=False, home=tmp_path / "home", peers=[peer],
                           deadlines=(1.0, 1.0), peer_backoff=OFF)  # fmt: skip
    try:
        async with Client(server) as client:
            for tool, args in QUERIES.items():
                with anyio.fail_after(GUARD):
                    answer = await call(client, tool, args)
                assert rows(tool, answer) == expected[tool], tool
                assert answer["peers_queried"] == 1 and answer["peers_responded"] == 0, answer
                assert answer["peer_latencies_us"] == {peer.name: None}
                assert answer["peers_skipped"] == []
                if behaviour in HANGING:
                    assert answer["peers_timed_out"] == 1 and answer["peer_errors"] == {}, answer
                else:
                    assert answer["peers_timed_out"] == 0, answer
                    assert set(answer["peer_errors"]) == {peer.name}, answer
                # the call let go of the peer: no socket to it is left open
                assert sockets_to(port) == 0, (tool, behaviour)
    finally:
        if fake is not None:
            fake.stop()
    if behaviour == "init_then_hang":  # it was the tool call that hung, not the handshake
        assert fake is not None and fake.methods.count("tools/call") == len(QUERIES)


async def test_nothing_is_left_running_after_calls_to_misbehaving_peers() -> None:
    made = [peer_of(b) for b in (*HANGING, *FAILING)]
    fakes = [fake for fake, _ in made if fake is not None]
    peers = [peer for _, peer in made]
    federation = Federation(peers, backoff=PeerBackoff(OFF))
    federation.warm()
    try:
        await anyio.sleep(0)  # let the loop settle before counting its tasks
        before = tasks()
        for _ in range(3):
            with anyio.fail_after(GUARD):
                answers = await federation.ask("find_entity", {"name": "bourdon"}, 0.5)
            assert {a.peer for a in answers if a.timed_out} == {p.name for p in peers[:4]}
            assert {a.peer for a in answers if a.error} == {p.name for p in peers[4:]}
            assert tasks() == before
            for fake in fakes:
                assert sockets_to(fake.port) == 0, fake.behaviour
    finally:
        await federation.aclose()
        for fake in fakes:
            fake.stop()


# -- 2. what backs a peer off -----------------------------------------------------------------


async def test_timeouts_and_transport_failures_back_a_peer_off_and_a_tool_error_does_not() -> None:
    kinds = {
        "silent": "no answer before the deadline",
        "close_mid_stream": "connection broken",
        "close_mid_event": "connection closed before the answer",
        "unauthorized": "HTTP 401",
        "oversize": "answer over the size cap",
        "refuse": "could not connect",
    }
    made = [peer_of(b) for b in (*kinds, "tool_error")]
    fakes = [fake for fake, _ in made if fake is not None]
    # a cap small enough for the oversize peer's answer to cross it
    federation = Federation([p for _, p in made], max_answer_bytes=16 * 1024,
                            backoff=PeerBackoff(Backoff(base=3600, cap=3600)))  # fmt: skip
    federation.warm()
    try:
        with anyio.fail_after(GUARD):
            first = {a.peer: a for a in await federation.ask("find_entity", {}, 1.0)}
            second = {a.peer: a for a in await federation.ask("find_entity", {}, 1.0)}
    finally:
        await federation.aclose()
        for fake in fakes:
            fake.stop()
    assert first["tool-error"].error and not first["tool-error"].skipped
    assert not second["tool-error"].skipped and second["tool-error"].error  # asked again
    for behaviour, kind in kinds.items():
        name = behaviour.replace("_", "-")
        assert not first[name].skipped and first[name].payload is None, name
        assert second[name].skipped, name
        assert second[name].error == f"skipped: {kind} once; next try in 3600 s", name


# -- 3. the back-off window -------------------------------------------------------------------


def skipped_reason(answer: dict[str, Any], name: str) -> str:
    assert answer["peers_skipped"] == [name], answer
    assert answer["peers_queried"] == 0 and answer["peers_timed_out"] == 0, answer
    assert answer["peers_responded"] == 0 and answer["peer_latencies_us"] == {name: None}
    reason: str = answer["peer_errors"][name]
    return reason


def timed_out(answer: dict[str, Any], name: str) -> bool:
    return bool(
        answer["peers_timed_out"] == 1
        and answer["peers_queried"] == 1
        and answer["peers_skipped"] == []
        and name not in answer["peer_errors"]
    )


async def status_of(client: Client) -> dict[str, Any]:
    [peer] = (await call(client, "memory_status", {}))["peers"]["peers"]
    return dict(peer)


@pytest.mark.parametrize("tool", ["find_entity", "prepare_recognition_context"])
async def test_a_hung_peer_is_asked_once_in_fifty_calls_within_its_window(
    lib: Path, tmp_path: Path, tool: str
) -> None:
    hung = MisbehavingPeer("silent")
    server = create_server(
        lib, watch=False, home=tmp_path / "home", peers=[Peer("hung", hung.url)],
        deadlines=(0.2, 0.5), peer_backoff=Backoff(base=3600, cap=3600, clock=lambda: 0.0),
    )  # fmt: skip
    try:
        async with Client(server) as client:
            with anyio.fail_after(GUARD):
                answers = [await call(client, tool, QUERIES[tool]) for _ in range(50)]
                status = await status_of(client)
    finally:
        hung.stop()
    assert sum(timed_out(a, "hung") for a in answers) == 1 and timed_out(answers[0], "hung")
    for answer in answers[1:]:
        reason = skipped_reason(answer, "hung")
        assert re.fullmatch(r"skipped: no answer before the deadline once; next try in \d+ s",
                            reason), reason  # fmt: skip
        assert rows(tool, answer) == rows(tool, answers[0])  # the local rows, every time
    assert rows(tool, answers[0])[ROWS[tool][0]], "the local library answered nothing"
    assert hung.methods == ["server/discover"], "the hung peer was asked more than once"
    assert status["reachable"] is False and status["problem"] == "no answer before the deadline"
    backoff = status["backoff"]
    assert backoff["failures"] == 1 and backoff["probing"] is False
    assert backoff["next_try_in_s"] == 3600  # the clock stands still: the whole window is left


def peer_library(root: Path) -> Path:
    data = manifest(
        "b-code",
        known_entities=[{"name": "bourdon", "type": "project", "summary": "b knows bourdon",
                         "visibility": "public"}],
    )  # fmt: skip
    with Library.init(root) as library:
        library.import_manifest(
            yamlio.dump(data), what="b-code", provenance=Provenance(caller="fixture")
        )
    return root


@pytest.fixture
def comeback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpServer]:
    """A real server, not started yet, that will take the hung peer's port; this process
    presents its token as peer ``p``."""
    user = tmp_path / "peer-user"
    user.mkdir()
    server = HttpServer(peer_library(tmp_path / "peer-lib"), user)
    monkeypatch.setenv(
        "BOURDON_PEER_TOKEN_P", MemberRegistry(server.home).add("a", "trusted", peer=True)
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("tool", ["find_entity", "prepare_recognition_context"])
async def test_a_hung_peer_is_tried_after_a_growing_window_and_reset_when_it_comes_back(
    lib: Path, tmp_path: Path, tool: str, comeback: HttpServer
) -> None:
    clock = Clock()
    hung = MisbehavingPeer("silent", comeback.port)
    server = create_server(
        lib, watch=False, home=tmp_path / "home", peers=[Peer("p", comeback.url)],
        deadlines=(0.2, 0.5), peer_backoff=Backoff(base=1, cap=4, clock=clock),
    )  # fmt: skip
    args = QUERIES[tool]
    try:
        async with Client(server) as client:
            with anyio.fail_after(GUARD):
                assert timed_out(await call(client, tool, args), "p")  # failure 1: 1 s
                reason = skipped_reason(await call(client, tool, args), "p")
                assert reason.endswith("once; next try in 1 s"), reason
                clock.advance(1)
                assert timed_out(await call(client, tool, args), "p")  # failure 2: 2 s
                clock.advance(1)
                reason = skipped_reason(await call(client, tool, args), "p")  # it grew
                assert reason.endswith("2 times in a row; next try in 1 s"), reason
                clock.advance(1)
                assert timed_out(await call(client, tool, args), "p")  # failure 3: 4 s
                clock.advance(4)
                assert timed_out(await call(client, tool, args), "p")  # failure 4: 4 s, the cap
                reason = skipped_reason(await call(client, tool, args), "p")
                assert reason.endswith("4 times in a row; next try in 4 s"), reason
                status = await status_of(client)
                assert status["backoff"]["failures"] == 4
                assert status["backoff"]["next_try_in_s"] == 4.0
                assert hung.methods == ["server/discover"] * 4  # once per window

                hung.stop()  # the peer comes back: a real server on the same port
                comeback.start()
                comeback.wait()
                guard = server.bourdon_guard  # type: ignore[attr-defined]
                guard.deadline = guard.recognition_deadline = 30.0  # a cold start, a busy box
                clock.advance(2)
                reason = skipped_reason(await call(client, tool, args), "p")  # not yet
                clock.advance(2)
                back = await call(client, tool, args)
                again = await call(client, tool, args)  # reset: asked at once, no window
                status = await status_of(client)
    finally:
        hung.stop()
    for answer in (back, again):
        assert answer["peers_responded"] == 1 and answer["peers_skipped"] == [], answer
        assert answer["peer_errors"] == {}, answer
        matches = answer["matches" if tool == "find_entity" else "matched_entities"]
        assert any("peer:p:b-code" in m["agents"] for m in matches), matches
    assert status["backoff"] is None and status["reachable"] is True


async def test_only_one_call_at_a_time_tries_a_peer_again() -> None:
    clock = Clock()
    hung = MisbehavingPeer("silent")
    federation = Federation([Peer("hung", hung.url)],
                            backoff=PeerBackoff(Backoff(base=1, clock=clock)))  # fmt: skip
    federation.warm()
    try:
        with anyio.fail_after(GUARD):
            [first] = await federation.ask("find_entity", {}, 0.3)
            assert first.timed_out
            clock.advance(1)
            together: list[PeerAnswer] = []

            async def one() -> None:
                together.extend(await federation.ask("find_entity", {}, 0.3))

            async with anyio.create_task_group() as tg:
                for _ in range(5):
                    tg.start_soon(one)
            # a call cancelled while it tries the peer leaves the next call to try it
            clock.advance(2)
            async with anyio.create_task_group() as tg:
                tg.start_soon(federation.ask, "find_entity", {}, 30.0)
                while len(hung.methods) < 3:  # until the peer has the cancelled call's request
                    await anyio.sleep(0.01)
                tg.cancel_scope.cancel()
            [after] = await federation.ask("find_entity", {}, 0.3)
    finally:
        await federation.aclose()
        hung.stop()
    assert sum(a.timed_out for a in together) == 1
    assert (
        sorted(a.error or "" for a in together if a.skipped)
        == ["skipped: no answer before the deadline once; another call is trying it now"] * 4
    )
    assert after.timed_out and not after.skipped
    assert hung.methods == ["server/discover"] * 4


async def test_calls_that_time_out_together_count_as_one_failure() -> None:
    """Calls running at once when a peer dies all time out: one failure, not one per call, so
    a busy server does not jump to the longest window at once."""
    hung = MisbehavingPeer("silent")
    federation = Federation([Peer("hung", hung.url)], backoff=PeerBackoff(Backoff(base=1)))
    federation.warm()
    together: list[PeerAnswer] = []

    async def one() -> None:
        together.extend(await federation.ask("find_entity", {}, 0.3))

    try:
        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(one)
    finally:
        await federation.aclose()
        hung.stop()
    assert [a.timed_out for a in together] == [True] * 4
    state = federation.backoff.report("hung")
    assert state is not None and state["failures"] == 1


def test_threads_trying_a_peer_again_let_exactly_one_through() -> None:
    import threading

    clock = Clock()
    backoff = PeerBackoff(Backoff(base=1, clock=clock))
    first = backoff.admit("p")
    assert not isinstance(first, str)
    backoff.failed(first, "could not connect")
    clock.advance(1)
    start, admitted = threading.Barrier(16), []

    def admit() -> None:
        start.wait()
        admitted.append(backoff.admit("p"))

    threads = [threading.Thread(target=admit) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=GUARD)
    assert len(admitted) == 16
    assert sum(not isinstance(a, str) for a in admitted) == 1
    probe = next(a for a in admitted if not isinstance(a, str))
    backoff.succeeded(probe)
    assert backoff.report("p") is None and not isinstance(backoff.admit("p"), str)


def test_the_window_doubles_from_its_base_to_its_cap() -> None:
    assert [Backoff().window(n) for n in range(9)] == [0, 1, 2, 4, 8, 16, 32, 60, 60]
    assert Backoff(base=0).window(5) == 0
    assert Backoff(base=0.5, cap=1).window(1000) == 1


# -- 4. the serve options ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--peer-backoff", "-1"], "--peer-backoff must be from 0 to 3600"),
        (["--peer-backoff", "nan"], "--peer-backoff must be from 0 to 3600"),
        (["--peer-backoff-max", "0"], "--peer-backoff-max must be more than 0"),
        (["--peer-backoff", "30", "--peer-backoff-max", "10"], "must be at least"),
    ],
)
def test_serve_refuses_back_off_values_that_make_no_sense(
    lib: Path, capsys: pytest.CaptureFixture[str], given: list[str], said: str
) -> None:
    code = cli_main(["--library", str(lib), "serve", "--no-watch", *given])
    assert code == 2 and said in capsys.readouterr().err


def test_serve_help_lists_the_back_off_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "--peer-backoff S" in out and "--peer-backoff-max S" in out
