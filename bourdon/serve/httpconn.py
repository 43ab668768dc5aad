"""The clock on each HTTP connection: a request must arrive whole, in time.

uvicorn closes a connection that idles *between* requests (``timeout_keep_alive``) but has no
clock on a request being received: a client that opens a connection and sends nothing, half a
request line, headers without their end, or headers and half a body would hold it forever, and
a few hundred such clients hold the server. ``timed_protocol(read_timeout)`` is uvicorn's h11
protocol with that clock: from a request's first byte (or from the connection's opening), the
whole request, headers and body, must arrive within ``read_timeout`` seconds; else the server
answers 408 (when it had not begun an answer) and closes the connection. A tool that takes
long to answer is not cut: the clock stops once the request is whole.

Imported by ``launch.serve_http`` only (it imports uvicorn and h11).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# h11's own cap on a request's head (request line and headers), stated here so it is seen.
MAX_HEAD: int = 16 * 1024


def _refusal(seconds: float) -> bytes:
    message = f"the request did not arrive whole within {seconds:g} s"
    error = {"code": "timeout", "status": 408, "message": message, "retryable": True}
    body = json.dumps({"error": error}).encode("utf-8")
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class TimedH11Protocol(H11Protocol):
    """``H11Protocol`` that closes a connection whose request is not received in time."""

    read_timeout: float = 10.0
    _read_clock: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_clock()

    def data_received(self, data: bytes) -> None:
        if self._read_clock is None and self.conn.their_state is h11.IDLE:
            self._start_clock()  # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._stop_clock()  # the request is whole (or the connection is done)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        super().connection_lost(exc)

    def _start_clock(self) -> None:
        self._stop_clock()
        self._read_clock = self.loop.call_later(self.read_timeout, self._out_of_time)

    def _stop_clock(self) -> None:
        if self._read_clock is not None:
            self._read_clock.cancel()
            self._read_clock = None

    def _out_of_time(self) -> None:
        self._read_clock = None
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return
        answered = self.cycle is not None and self.cycle.response_started
        if not answered and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(_refusal(self.read_timeout))
        if self.cycle is not None:
            self.cycle.keep_alive = False
        self.transport.close()


def timed_protocol(read_timeout: float) -> type[Any]:
    """The protocol class uvicorn's ``Config(http=...)`` takes, with its clock set."""
    return type("TimedH11Protocol", (TimedH11Protocol,), {"read_timeout": read_timeout})
