"""The one HTTP client every peer call goes through: each peer's bearer token, no redirects,
and response bodies capped so a peer can spoil its own contribution, never this process's
memory.

What the HTTP layer saw go wrong (a bad status, a redirect, an answer over the cap) is written
to the call's ``Witness`` (``WITNESS``, set by the calling task): the MCP SDK turns these into
JSON-RPC errors that cannot be told apart from a peer's own, and back-off must tell them apart.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bourdon.federation.peers import Peer

log = logging.getLogger("bourdon.federation")


@dataclass
class Witness:
    """What the HTTP layer saw go wrong in the last exchange of one peer call (None: nothing:
    a legacy peer may answer a modern probe with a 404, then the handshake with a 200)."""

    problem: str | None = None


# Set by each peer call's task; the SDK's own tasks inherit it (a context is copied at spawn).
WITNESS: ContextVar[Witness | None] = ContextVar("bourdon_peer_witness", default=None)


def _saw(problem: str | None) -> None:
    witness = WITNESS.get()
    if witness is not None:
        witness.problem = problem


def http_problem(status: int) -> str | None:
    """The transport failure an HTTP status says, or None. A 400 carries the peer's own
    JSON-RPC error (the peer is alive); a 202, a 2xx, is no failure."""
    if 300 <= status < 400:
        return "redirected"
    if status > 400:
        return f"HTTP {status}"
    return None


def peer_http_client(
    peers: Iterable[Peer], tokens: Mapping[str, str], *, cap: int, timeout: float
) -> Any:
    """An ``httpx2.AsyncClient`` that presents each peer its token (``tokens``: peer name ->
    token) and stops reading any response past ``cap`` bytes."""
    import httpx2

    by_url = {p.url: tokens.get(p.name) for p in peers}

    class PeerAuth(httpx2.Auth):
        def auth_flow(self, request: Any) -> Any:
            for url, token in by_url.items():
                if token and str(request.url).startswith(url):
                    request.headers["Authorization"] = f"Bearer {token}"
            yield request

    limits = httpx2.Limits(max_connections=32, max_keepalive_connections=16)
    return httpx2.AsyncClient(
        auth=PeerAuth(),
        follow_redirects=False,
        timeout=httpx2.Timeout(timeout, connect=2.0),
        transport=_capped_transport(limits, cap),
    )


def _capped_transport(limits: Any, cap: int) -> Any:
    """An HTTP transport whose response bodies stop with an error past ``cap`` bytes."""
    import httpx2

    class TooLargeError(httpx2.StreamError):
        """Raised while reading: the SDK turns it into a failed call, never a crash."""

    class Capped(httpx2.AsyncByteStream):
        def __init__(self, inner: httpx2.AsyncByteStream, url: str) -> None:
            self.inner, self.url = inner, url

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > cap:
                    # Said here: over SSE the SDK reports only that the stream ended.
                    log.warning("a peer answer from %s was over %s bytes: dropped", self.url, cap)
                    _saw("answer over the size cap")
                    raise TooLargeError(f"peer answer over {cap:,} bytes")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class Transport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            response = await super().handle_async_request(request)
            _saw(http_problem(response.status_code))  # the last exchange is the one that counts
            if isinstance(response.stream, httpx2.AsyncByteStream):  # always, from this base
                response.stream = Capped(response.stream, str(request.url))
            return response

    return Transport(limits=limits)
