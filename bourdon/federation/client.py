"""The bounded fan-out: ask other machines' bourdon servers, in parallel, under a deadline.

Every federated call asks all peers at once through one shared HTTP client
(``transport.peer_http_client``), and one overall deadline (anyio cancel scope) bounds
connecting, slow bodies and hung peers alike: a peer that misses it is reported in
``peers_timed_out``, never awaited. Peers are asked with ``federation_hop=1`` and answer from
their own library only, so servers that list each other never recurse. What each call said of
each peer is kept (``Federation.last``) for ``memory_status``, which never asks a peer itself.

A peer that timed out or failed at the transport is skipped for a growing window
(``backoff``): it is reported in ``peers_skipped``, not asked, and one call at a time tries it
again once the window has passed. A peer that answers at all, even with an error, is alive.

An answer is read from its structured content, else from its JSON text content (what older
servers send, and all the reference's own peer client reads). Every HTTP response from a peer
is capped at ``MAX_ANSWER_BYTES``. How the answers are filtered and merged into the local one
is ``answers`` and ``join``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from bourdon.federation.backoff import PeerBackoff, Ticket
from bourdon.federation.peers import Peer
from bourdon.federation.transport import WITNESS, Witness, peer_http_client

RECOGNITION_DEADLINE: Final = 0.2
DEFAULT_DEADLINE: Final = 5.0
TIMED_OUT: Final = "no answer before the deadline"
# The reference implementation's own budget for one peer answer, so an answer it accepts from
# a peer is accepted here too.
MAX_ANSWER_BYTES: Final = 4 * 1024 * 1024


@dataclass
class PeerAnswer:
    peer: str
    payload: dict[str, Any] | None = None
    latency_us: float | None = None
    error: str | None = None
    timed_out: bool = False
    skipped: bool = False  # backed off: not asked; ``error`` says why
    # The transport failure (a kind, no value the peer sent) that backs the peer off; None
    # when it answered, even with an error.
    failure: str | None = None


@dataclass
class Federation:
    """The peers of this server and the one HTTP client used to reach them."""

    peers: list[Peer]
    tokens: Mapping[str, str] = field(default_factory=dict)  # peer name -> token
    # What the last call to each peer said (peer_outcome), for memory_status: never a new call.
    last: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_answer_bytes: int = MAX_ANSWER_BYTES  # per HTTP response from a peer
    backoff: PeerBackoff = field(default_factory=PeerBackoff)
    _client: Any = None
    _modes: dict[str, str] = field(default_factory=dict)

    async def ask(self, tool: str, args: dict[str, Any], deadline: float) -> list[PeerAnswer]:
        """Call ``tool`` on every peer not backed off, at once; whatever has not answered by
        ``deadline`` s is reported as timed out, and a backed-off peer as skipped."""
        answers = {p.name: PeerAnswer(p.name) for p in self.peers}
        tickets: dict[str, Ticket] = {}
        for peer in self.peers:
            admitted = self.backoff.admit(peer.name)
            if isinstance(admitted, Ticket):
                tickets[peer.name] = admitted
            else:
                answers[peer.name].skipped, answers[peer.name].error = True, admitted
        try:
            if tickets:
                await self._fan_out(
                    [p for p in self.peers if p.name in tickets], answers, tool, args, deadline
                )
            for name, ticket in list(tickets.items()):
                self._judge(answers[name], ticket, tool)
                del tickets[name]
        finally:
            for ticket in tickets.values():  # cancelled from outside: no verdict
                self.backoff.released(ticket)
        return list(answers.values())

    async def _fan_out(
        self,
        peers: list[Peer],
        answers: dict[str, PeerAnswer],
        tool: str,
        args: dict[str, Any],
        deadline: float,
    ) -> None:
        import anyio

        client = self._http()

        async def one(peer: Peer) -> None:
            answer, witness = answers[peer.name], Witness()
            WITNESS.set(witness)  # this task's context: the SDK's tasks for the call inherit it
            start = time.perf_counter()
            try:
                result = await self._call(client, peer, tool, args)
            except Exception as exc:
                answer.error, answer.failure = _describe(exc), _failure(exc, witness)
                return
            except BaseException as group:  # ExceptionGroup from the SDK's task groups
                fatal = (KeyboardInterrupt, SystemExit, anyio.get_cancelled_exc_class())
                if isinstance(group, fatal):
                    raise
                answer.error, answer.failure = _describe(group), _failure(group, witness)
                return
            try:  # it answered: alive, whatever the answer says
                answer.payload = answer_payload(result)
                answer.latency_us = round((time.perf_counter() - start) * 1e6, 1)
            except RuntimeError as exc:
                answer.error = str(exc)

        with anyio.move_on_after(deadline):
            async with anyio.create_task_group() as tg:
                for peer in peers:
                    tg.start_soon(one, peer)

    def _judge(self, answer: PeerAnswer, ticket: Ticket, tool: str) -> None:
        """Settle the peer's back-off by what this call saw of it, and keep the outcome."""
        if answer.payload is None and answer.error is None:
            answer.timed_out = True
            self.backoff.failed(ticket, TIMED_OUT)
        elif answer.failure is not None:
            self.backoff.failed(ticket, answer.failure)
        else:
            self.backoff.succeeded(ticket)
        self.last[answer.peer] = peer_outcome(answer, tool)

    async def _call(self, client: Any, peer: Peer, tool: str, args: dict[str, Any]) -> Any:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        mode = self._modes.get(peer.name, "auto")
        transport = streamable_http_client(
            peer.url,
            http_client=client,
            terminate_on_close=False,
            max_sse_event_size=self.max_answer_bytes,  # the reference answers over SSE
        )
        async with Client(transport, mode=mode) as session:
            if mode == "auto":  # remember what the peer speaks: no probing next time
                version = getattr(session, "protocol_version", None)
                self._modes[peer.name] = "2026-07-28" if version == "2026-07-28" else "legacy"
            return await session.call_tool(tool, args)

    def warm(self) -> None:
        """Create the shared client and import the MCP client now: an import inside a
        deadline would block the event loop past it on the first federated call."""
        import mcp.client.streamable_http  # noqa: F401

        self._http()

    def _http(self) -> Any:
        if self._client is None:
            self._client = peer_http_client(
                self.peers, self.tokens, cap=self.max_answer_bytes, timeout=DEFAULT_DEADLINE
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None


def answer_payload(result: Any) -> dict[str, Any]:
    """The answer of one peer tool call as a dict: its structured content, else the first
    text item holding a JSON object (the reference's peer client reads only that).

    Raises ``RuntimeError`` for a tool error, an error answer of the reference's kind (a
    top-level ``error``, which no successful federated answer has) or no usable content.
    """
    payload: dict[str, Any] | None = result.structured_content
    if not isinstance(payload, dict):
        payload = None
        for item in result.content or []:
            text = getattr(item, "text", None)
            if not isinstance(text, str):
                continue
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                payload = parsed
                break
    if result.is_error or payload is None or payload.get("error"):
        detail = payload.get("error") if payload else None
        if detail is None:
            detail = [getattr(item, "text", "") for item in result.content or []]
        raise RuntimeError(f"peer answered an error: {str(detail)[:200]}")
    return payload


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    inner = _innermost(exc)
    return f"{type(inner).__name__}: {str(inner)[:160]}"


def _failure(exc: BaseException, witness: Witness) -> str | None:
    """The kind of transport failure behind an exception from a peer call (for back-off), or
    None when the peer itself answered with a JSON-RPC error: it is alive.

    The SDK makes up a JSON-RPC error for a bad HTTP status or a redirect (which the witness
    saw), an answer it could not parse, and a stream that ended before the answer.
    """
    import httpx2
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, PARSE_ERROR

    inner = _innermost(exc)
    if witness.problem is not None:
        return witness.problem
    if isinstance(inner, MCPError):
        if inner.code == PARSE_ERROR:
            return "not an MCP answer"
        if inner.code == CONNECTION_CLOSED:
            return "connection closed before the answer"
        return None
    if isinstance(inner, httpx2.ConnectError):
        return "could not connect"
    if isinstance(inner, httpx2.TimeoutException):
        return TIMED_OUT
    if isinstance(inner, httpx2.TransportError | OSError):
        return "connection broken"
    return "failed"


def peer_outcome(answer: PeerAnswer, tool: str) -> dict[str, Any]:
    """What one call said about a peer: reachable, how fast, why not, and when."""
    latency = answer.latency_us
    return {
        "reachable": answer.payload is not None,
        "latency_ms": round(latency / 1000, 1) if latency is not None else None,
        "problem": TIMED_OUT if answer.timed_out else answer.error,
        "tool": tool,
        "checked_at": datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
    }
