"""Starting the server: which doors are safe to open, and running it over stdio or HTTP.

``bourdon serve`` parses its options into a ``Door`` and calls ``serve``; everything that
decides whether a bind is safe, and how the HTTP app is stacked (the MCP app behind the
``HttpGate``, run by uvicorn), lives here. The MCP SDK and uvicorn are imported on use.
"""

from __future__ import annotations

import errno
import ipaddress
import math
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bourdon.errors import InputError, PortInUseError
from bourdon.federation.backoff import Backoff

DEFAULT_TIMEOUT = 10.0  # seconds: see Door.timeout
KEEP_ALIVE = 5  # seconds a connection may idle between requests, at most


@dataclass(frozen=True)
class Door:
    """How the HTTP server is reached, and by whom."""

    host: str
    port: int
    allow_unauthenticated: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    # A request must arrive whole within this many seconds of its first byte, and a response
    # stream that carries nothing for as long is ended; connections idle between requests
    # for at most min(timeout, KEEP_ALIVE) seconds.
    timeout: float = DEFAULT_TIMEOUT


def peer_backoff(base: float, cap: float) -> Backoff:
    """``--peer-backoff`` and ``--peer-backoff-max`` checked: a failed peer is skipped for
    ``base`` s, doubled after each failure in a row, at most ``cap`` s (``base`` 0: never)."""
    if not (math.isfinite(base) and 0 <= base <= 3600):
        raise InputError(f"--peer-backoff must be from 0 to 3600 seconds, got {base:g}")
    if not (math.isfinite(cap) and 0 < cap <= 86400):
        raise InputError(f"--peer-backoff-max must be more than 0 and at most 86400, got {cap:g}")
    if cap < base:
        raise InputError(f"--peer-backoff-max ({cap:g}) must be at least --peer-backoff ({base:g})")
    return Backoff(base=base, cap=cap)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_door(door: Door, active_members: int) -> None:
    """Refuse a bind that would let callers in that nobody enrolled."""
    if door.allow_unauthenticated and not is_loopback(door.host):
        raise InputError(
            f"--allow-unauthenticated serves on loopback only, not on --host {door.host}: "
            "enrol members (bourdon member add NAME) to serve beyond this machine"
        )
    if not is_loopback(door.host) and active_members == 0:
        raise InputError(
            f"--host {door.host} would expose the library beyond this machine, and no member "
            "can authenticate yet; enrol one first (bourdon member add NAME), or serve on "
            "127.0.0.1, the default"
        )


def client_config(root: Path, program: list[str] | None = None) -> dict[str, Any]:
    """What an MCP client's configuration needs to start this server: the reference's form,
    ``{"command": ..., "args": ["serve", "--library", PATH]}``, with ``command`` the absolute
    path of the running bourdon (``program``, default ``hookfiles.running_bourdon()``; a
    ``python -m bourdon`` run puts ``-m bourdon`` first in ``args``): a client's PATH may not
    have ``bourdon`` on it."""
    from bourdon.ingest.hookfiles import running_bourdon

    command, *first = program or running_bourdon()
    return {"command": command, "args": [*first, "serve", "--library", str(root.absolute())]}


def server_state(server: Any) -> tuple[int, int]:
    """How many agents the server serves, and how many manifests it skipped."""
    index = getattr(server, "bourdon_index", None)
    if index is None:
        return (0, 0)
    return (len(index.agents), len(index.problems))


def serve_stdio(server: Any) -> None:
    import anyio

    anyio.run(server.run_stdio_async)


def listen(door: Door) -> socket.socket:
    """The listening socket, bound before anything says "serving": a port another program
    holds is a ``PortInUseError`` (exit 9), an address that is not this machine's an
    ``InputError``."""
    host = door.host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said outright: asyncio turns Nagle off only on sockets that say so, and with
    # it on, every answer written in two parts waited ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, door.port))
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{door.port}" if ":" in host else f"{host}:{door.port}"
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"{where} is in use by another program; stop it, or serve on another port "
                "(--port N)"
            ) from None
        raise InputError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve_http(
    server: Any,
    door: Door,
    registry: Any,
    say: Callable[[str], None],
    serving: str,
    *,
    operator_link: bool = False,
) -> None:
    """Serve MCP at ``/mcp`` and the web view at ``/ui/``; with ``operator_link`` (``bourdon
    ui``), print a one-time link that logs the local operator in to the web view."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from bourdon.serve.httpconn import MAX_HEAD, timed_protocol
    from bourdon.serve.httpgate import MAX_BODY, HttpGate
    from bourdon.serve.web.app import WebApp

    guard = server.bourdon_guard
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        host=door.host,
        max_request_body_size=MAX_BODY,
        # The gate checks Host and Origin, with the lists the docs give (the SDK's own check
        # would refuse https:// loopback origins and the operator's declared hosts).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    gate = HttpGate(
        app,
        registry=registry,
        audit=guard.audit,
        host=door.host,
        port=door.port,
        allow_unauthenticated=door.allow_unauthenticated,
        extra_hosts=door.allowed_hosts,
        extra_origins=door.allowed_origins,
        stream_idle=door.timeout,
        web=(web := WebApp(server, registry)),
    )
    sock = listen(door)
    members = registry.active_count()
    if door.allow_unauthenticated:
        access = "requests without a token read public rows only"
    else:
        hint = "" if members else "; no member yet: bourdon member add NAME gives a token"
        access = f"tokens required{hint}"
    active = f"{members} active member{'' if members == 1 else 's'}"
    say(f"{serving} at http://{door.host}:{door.port}/mcp, {active}, {access}")
    base = f"http://{door.host}:{door.port}/ui"
    if operator_link:
        # Printed even with --quiet: without it nobody can log in as the operator.
        print(
            f"open {base}/login/{web.sessions.login_code()} to log in as the local operator "
            "(the link works once, for 10 minutes); members log in with their token at "
            f"{base}/login",
            flush=True,
        )
    config = uvicorn.Config(
        gate,
        host=door.host,
        port=door.port,
        log_level="warning",
        lifespan="on",
        http=timed_protocol(door.timeout),
        h11_max_incomplete_event_size=MAX_HEAD,
        timeout_keep_alive=max(1, math.ceil(min(door.timeout, KEEP_ALIVE))),
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
