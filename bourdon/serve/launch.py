"""Starting the server: which doors are safe to open, and running it over stdio or HTTP.

``bourdon serve`` parses its options into a ``Door`` and calls ``serve``; everything that
decides whether a bind is safe, and how the HTTP app is stacked (the MCP app behind the
``HttpGate``, run by uvicorn), lives here. The MCP SDK and uvicorn are imported on use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bourdon.errors import InputError


@dataclass(frozen=True)
class Door:
    """How the HTTP server is reached, and by whom."""

    host: str
    port: int
    allow_unauthenticated: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


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


def client_config(root: Path) -> dict[str, Any]:
    """What an MCP client's configuration needs to start this server: the reference's form."""
    return {"command": "bourdon", "args": ["serve", "--library", str(root)]}


def server_state(server: Any) -> tuple[int, int]:
    """How many agents the server serves, and how many manifests it skipped."""
    index = getattr(server, "bourdon_index", None)
    if index is None:
        return (0, 0)
    return (len(index.agents), len(index.problems))


def serve_stdio(server: Any) -> None:
    import anyio

    anyio.run(server.run_stdio_async)


def serve_http(
    server: Any, door: Door, registry: Any, say: Callable[[str], None], serving: str
) -> None:
    import uvicorn

    from bourdon.serve.httpgate import MAX_BODY, HttpGate

    guard = server.bourdon_guard
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        host=door.host,
        max_request_body_size=MAX_BODY,
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
    )
    members = registry.active_count()
    if door.allow_unauthenticated:
        access = "requests without a token read public rows only"
    else:
        hint = "" if members else "; no member yet: bourdon member add NAME gives a token"
        access = f"tokens required{hint}"
    say(f"{serving} at http://{door.host}:{door.port}/mcp, {members} active member(s), {access}")
    config = uvicorn.Config(
        gate, host=door.host, port=door.port, log_level="warning", lifespan="on"
    )
    uvicorn.Server(config).run()
