"""Peers that misbehave at every stage of a call, as raw-socket servers on 127.0.0.1 in threads.

``MisbehavingPeer(behaviour)`` listens on an OS-chosen port (or ``port``) and handles each
connection as ``behaviour`` says:

- ``silent``: accepts and reads, never answers;
- ``headers_then_stall``: answers ``200`` headers of a JSON body it never sends;
- ``sse_trickle``: answers an SSE stream and trickles comment bytes into it, forever;
- ``init_then_hang``: speaks MCP through ``initialize`` (a modern probe is told "method not
  found"), then never answers ``tools/call``;
- ``close_mid_stream``: answers half a JSON body, then closes the connection;
- ``close_mid_event``: answers half an SSE event, then closes the connection;
- ``unauthorized``: answers every request with ``401``;
- ``oversize``: answers ``initialize`` with a JSON body of ``OVERSIZE`` bytes;
- ``tool_error``: speaks MCP and answers every tool call with a tool error (an alive peer).

``methods`` lists the JSON-RPC methods it was sent, in order; ``stop()`` closes the listener
and every connection, so its threads end.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from typing import Any, BinaryIO

HOST = "127.0.0.1"
OVERSIZE = 64 * 1024
TRICKLE_EVERY = 0.02  # seconds between two bytes of a trickled stream
MODERN_PROBE = "server/discover"


def read_request(rfile: BinaryIO) -> bytes | None:
    """One HTTP/1.1 request's body, or None once the client closed the connection."""
    length = 0
    first = True
    while True:
        line = rfile.readline(65537)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if first:
                continue
            break
        first = False
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or b"0")
    body = rfile.read(length) if length else b""
    return body if len(body) == length else None


def response(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
    return head.encode("latin-1") + b"\r\n" + body


def rpc(message: Any) -> bytes:
    return response("200 OK", json.dumps(message).encode())


def handshake(request: dict[str, Any]) -> bytes | None:
    """The answer to an MCP handshake message, or None for any other request."""
    method, ident = request.get("method"), request.get("id")
    if ident is None:  # a notification
        return response("202 Accepted", b"")
    if method == MODERN_PROBE:
        error = {"code": -32601, "message": "Method not found"}
        return rpc({"jsonrpc": "2.0", "id": ident, "error": error})
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "misbehaving", "version": "1"}}  # fmt: skip
        return rpc({"jsonrpc": "2.0", "id": ident, "result": result})
    return None


class MisbehavingPeer:
    def __init__(self, behaviour: str, port: int = 0) -> None:
        self.behaviour = behaviour
        self.methods: list[str] = []
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((HOST, port))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/mcp"

    def stop(self) -> None:
        self.stopped.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        self._thread.join(timeout=10)

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        rfile = conn.makefile("rb")
        try:
            getattr(self, self.behaviour)(conn, rfile)
        except (OSError, ValueError):
            pass  # the client went away, or stop() closed the connection
        finally:
            rfile.close()
            conn.close()

    def _next(self, rfile: BinaryIO) -> dict[str, Any] | None:
        body = read_request(rfile)
        if body is None:
            return None
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        with self._lock:
            self.methods.append(str(request.get("method")))
        return request if isinstance(request, dict) else {}

    def _hold(self, rfile: BinaryIO) -> None:
        """Answer nothing more: read until the client closes."""
        while rfile.read(1):
            pass

    # -- behaviours ------------------------------------------------------------------------

    def silent(self, conn: socket.socket, rfile: BinaryIO) -> None:
        if self._next(rfile) is not None:
            self._hold(rfile)

    def headers_then_stall(self, conn: socket.socket, rfile: BinaryIO) -> None:
        if self._next(rfile) is not None:
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: 4096\r\n\r\n")  # fmt: skip
            self._hold(rfile)

    def sse_trickle(self, conn: socket.socket, rfile: BinaryIO) -> None:
        if self._next(rfile) is None:
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")  # fmt: skip
        while not self.stopped.wait(TRICKLE_EVERY):
            conn.sendall(b"2\r\n:\n\r\n")  # an SSE comment, one chunk at a time

    def init_then_hang(self, conn: socket.socket, rfile: BinaryIO) -> None:
        while (request := self._next(rfile)) is not None:
            answer = handshake(request)
            if answer is None:  # the tool call
                self._hold(rfile)
                return
            conn.sendall(answer)

    def close_mid_stream(self, conn: socket.socket, rfile: BinaryIO) -> None:
        if self._next(rfile) is not None:
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b'content-length: 4096\r\n\r\n{"jsonrpc": "2.0", "id": 1, "res')  # fmt: skip

    def close_mid_event(self, conn: socket.socket, rfile: BinaryIO) -> None:
        if self._next(rfile) is not None:
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n"
                         b'10\r\ndata: {"jsonrpc"\r\n')  # fmt: skip

    def unauthorized(self, conn: socket.socket, rfile: BinaryIO) -> None:
        while self._next(rfile) is not None:
            conn.sendall(response("401 Unauthorized", b'{"error": "no valid token"}'))

    def oversize(self, conn: socket.socket, rfile: BinaryIO) -> None:
        while (request := self._next(rfile)) is not None:
            answer = handshake(request)
            if request.get("method") == "initialize":
                padding = "x" * OVERSIZE
                result = {"protocolVersion": "2025-06-18", "capabilities": {},
                          "serverInfo": {"name": padding, "version": "1"}}  # fmt: skip
                answer = rpc({"jsonrpc": "2.0", "id": request["id"], "result": result})
            conn.sendall(answer or response("500 Internal Server Error", b"{}"))

    def tool_error(self, conn: socket.socket, rfile: BinaryIO) -> None:
        while (request := self._next(rfile)) is not None:
            answer = handshake(request)
            if answer is None:
                result = {"content": [{"type": "text", "text": "no such thing"}], "isError": True}
                answer = rpc({"jsonrpc": "2.0", "id": request.get("id"), "result": result})
            conn.sendall(answer)
