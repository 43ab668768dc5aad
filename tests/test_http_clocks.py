"""The HTTP server closes what a client leaves hanging, and says so when it cannot start
(issue 13, item 17).

Against a real ``bourdon serve --transport http --http-timeout 1`` on 127.0.0.1, with raw
sockets, each with its own timeout (the bound a test waits, far above the server's clock):

- a connection that sends nothing, half a request line, headers without their end, or headers
  and half a body is closed (with a 408 when no answer had begun), so a crowd of them cannot
  hold the server;
- a response stream that carries nothing (a ``GET`` event stream: this stateless server never
  sends on one) is ended;
- a busy port is one line on stderr and exit code 9, before any ``serving`` line.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bourdon.access.trust import MemberRegistry
from bourdon.errors import PortInUseError
from bourdon.store.library import Library
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

BOUND = 20.0  # seconds a test waits for the server to close a connection (its clock: 1 s)
CROWD = 40  # half-sent requests held at once


@dataclass
class Server:
    port: int
    token: str
    proc: subprocess.Popen[bytes]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=BOUND)

    def head(self, method: str = "POST", extra: str = "") -> bytes:
        return (
            f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Authorization: Bearer {self.token}\r\n{extra}"
        ).encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("clocks")
    root, user = base / "lib", base / "user"
    Library.init(root).close()
    token = MemberRegistry(user / ".bourdon").add("laptop", "trusted")
    port = free_port()
    err = base / "server.stderr"
    with open(err, "wb") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bourdon", "--library", str(root), "serve", "--transport",
             "http", "--port", str(port), "--no-watch", "--http-timeout", "1"],
            env=child_env(user), stdout=subprocess.DEVNULL, stderr=e, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        wait_for_port(proc, port, log=err)
        yield Server(port, token, proc)
    finally:
        stop_process(proc)


def until_closed(sock: socket.socket, deadline: float | None = None) -> tuple[bool, bytes]:
    """Read until the server closes (True) or BOUND passes (or ``deadline``, a
    ``time.monotonic()`` value shared by many sockets) with the connection open (False)."""
    got = b""
    if deadline is not None:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except TimeoutError:
        return False, got
    except ConnectionResetError:
        pass
    return True, got


def describe(server: Server) -> int | None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "describe_caller", "arguments": {}}}).encode()
    extra = ("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
             f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n")  # fmt: skip
    with server.connect() as sock:
        sock.sendall(server.head(extra=extra) + body)
        _, reply = until_closed(sock)
    return int(reply.split()[1]) if reply.startswith(b"HTTP/") else None


def test_half_sent_requests_are_closed_and_the_server_keeps_answering(server: Server) -> None:
    shapes = {
        "nothing": b"",
        "half a request line": b"POST /mc",
        "headers without their end": server.head(),
        "headers, half the body": server.head(
            extra="Content-Type: application/json\r\nContent-Length: 500\r\n\r\n"
        ) + b'{"jsonrpc": "2.0", ',
    }
    held = []
    for n in range(CROWD):
        label, data = list(shapes.items())[n % len(shapes)]
        sock = server.connect()
        if data:
            sock.sendall(data)
        held.append((label, sock))
    outcome = {}
    deadline = time.monotonic() + BOUND  # one bound for the whole crowd
    try:
        for label, sock in held:
            closed, reply = until_closed(sock, deadline)
            status = reply.split()[1].decode() if reply.startswith(b"HTTP/") else "-"
            outcome.setdefault(label, set()).add((closed, status))
    finally:
        for _, sock in held:
            sock.close()
    assert outcome == {
        "nothing": {(True, "408")},
        "half a request line": {(True, "408")},
        "headers without their end": {(True, "408")},
        "headers, half the body": {(True, "408")},
    }
    assert describe(server) == 200
    assert server.proc.poll() is None


def test_an_idle_event_stream_is_ended(server: Server) -> None:
    with server.connect() as sock:
        sock.sendall(server.head("GET", "Accept: text/event-stream\r\n\r\n"))
        closed, reply = until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    assert closed, "the idle stream was still open after the bound"
    assert reply.endswith(b"0\r\n\r\n")  # ended as a whole chunked response, not cut
    assert describe(server) == 200


def test_an_idle_kept_alive_connection_is_closed(server: Server) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
    extra = ("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
             f"Content-Length: {len(body)}\r\n\r\n")  # fmt: skip
    with server.connect() as sock:
        sock.sendall(server.head(extra=extra) + body)
        closed, reply = until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 200") and closed


def test_a_busy_port_is_one_line_and_its_own_exit_code(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    Library.init(root).close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "bourdon", "--library", str(root), "serve", "--transport",
             "http", "--port", str(port), "--no-watch"],
            capture_output=True, text=True, timeout=120, check=False, env=child_env(tmp_path),
        )  # fmt: skip
    assert done.returncode == PortInUseError.exit_code == 9, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port}" in lines[0] and "in use" in lines[0] and "--port" in lines[0]
    assert "serving" not in done.stderr and done.stdout == ""
