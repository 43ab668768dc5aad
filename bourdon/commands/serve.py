"""``bourdon serve``: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from bourdon.cli import library_path
from bourdon.errors import InputError


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the MCP server (stdio, or streamable HTTP)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7500, help="HTTP port (default 7500)")
    p.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="also ask this peer server (repeatable; adds to $BOURDON_HOME/peers.yaml); its "
        "token is read from $BOURDON_PEER_TOKEN_<NAME>",
    )
    p.add_argument(
        "--peer-deadline",
        type=float,
        default=5.0,
        metavar="S",
        help="how long federated tools wait for peers (default 5)",
    )
    p.add_argument(
        "--recognition-deadline",
        type=float,
        default=0.2,
        metavar="S",
        help="how long turn-start recognition waits for peers (default 0.2)",
    )
    p.add_argument(
        "--no-watch",
        action="store_true",
        help="do not watch agents/ for edits (commits are still seen on each call)",
    )
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import anyio

    from bourdon.cli import home_path as home
    from bourdon.library import Library
    from bourdon.server import create_server
    from bourdon.trust import MemberRegistry

    if not 0 < args.port < 65536:
        raise InputError(f"--port must be from 1 to 65535, got {args.port}")
    registry = MemberRegistry(home())
    if args.transport == "http" and not is_loopback(args.host) and registry.active_count() == 0:
        raise InputError(
            f"--host {args.host} would expose the library beyond this machine, and no member "
            "can authenticate yet; enrol one first (bourdon member add NAME), or serve on "
            "127.0.0.1, the default"
        )
    root = library_path(args).absolute()
    Library.open(root).close()
    # Logs go to stderr: under stdio, stdout carries the protocol and nothing else.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="bourdon: %(levelname)s %(message)s"
    )
    from bourdon.federation import parse_peer

    peers = [parse_peer(text) for text in args.peer]
    deadlines = (max(0.01, args.recognition_deadline), max(0.01, args.peer_deadline))
    server = create_server(
        root, watch=not args.no_watch, home=home(), peers=peers, deadlines=deadlines
    )
    # The index is long-lived: move it out of the collector's way, so full collections (which
    # would otherwise rescan every row) do not pause answers for a hundred milliseconds.
    import gc

    gc.freeze()
    state = server_state(server)
    skipped = f", {state[1]} skipped (see warnings)" if state[1] else ""
    if args.transport == "stdio":
        client = {"command": "bourdon", "args": ["--library", str(root), "serve"]}
        say(
            f"serving {root} ({state[0]} agents{skipped}) over stdio; "
            f"MCP client config: {json.dumps(client)}"
        )
        anyio.run(server.run_stdio_async)
        return 0
    serve_http(server, args.host, args.port, root, state, skipped, registry)
    return 0


def serve_http(
    server: Any,
    host: str,
    port: int,
    root: Any,
    state: tuple[int, int],
    skipped: str,
    registry: Any,
) -> None:
    import uvicorn

    from bourdon.httpgate import MAX_BODY, HttpGate

    guard = server.bourdon_guard
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        json_response=True,
        stateless_http=True,
        host=host,
        max_request_body_size=MAX_BODY,
    )
    gate = HttpGate(app, registry=registry, audit=guard.audit, host=host, port=port)
    members = registry.active_count()
    hint = "" if members else "; no member yet: bourdon member add NAME gives a token"
    say(
        f"serving {root} ({state[0]} agents{skipped}) at http://{host}:{port}/mcp, "
        f"{members} active member(s), tokens required{hint}"
    )
    config = uvicorn.Config(gate, host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()


def is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_state(server: Any) -> tuple[int, int]:
    index = getattr(server, "bourdon_index", None)
    if index is None:
        return (0, 0)
    return (len(index.agents), len(index.problems))


def say(text: str) -> None:
    sys.stderr.write(f"bourdon: {text}\n")
    sys.stderr.flush()
