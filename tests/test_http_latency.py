"""HTTP answers leave as soon as they are written.

An answer goes out in more than one write (headers, then body). With Nagle's algorithm on, the
second write waits for the client to acknowledge the first, and clients delay that ACK by up to
40 ms: every call over HTTP, a peer's included, took ~45 ms instead of ~3. asyncio turns Nagle
off only on sockets created as TCP, so the listening socket says so, and its connections
inherit it. The figure lives in ``make bench`` (bench_freshness's warm calls over HTTP).
"""

from __future__ import annotations

import socket

from bourdon.serve.launch import Door, listen


def test_connections_to_the_http_server_send_without_waiting_for_acks() -> None:
    server = listen(Door("127.0.0.1", 0))
    try:
        server.listen(1)
        assert server.proto == socket.IPPROTO_TCP
        with socket.create_connection(server.getsockname()[:2], timeout=10) as client:
            accepted, _ = server.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                client.sendall(b"ping")
                assert accepted.recv(4) == b"ping"
    finally:
        server.close()
