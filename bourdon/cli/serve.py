"""``bourdon serve``: the MCP server over stdio (default) or streamable HTTP; ``bourdon ui``:
the same HTTP server, printing a one-time link that logs the local operator in to its web
view (``/ui/``, where members log in with their token)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import library_path
from bourdon.errors import InputError

if TYPE_CHECKING:
    from bourdon.federation.peers import Peer


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the MCP server (stdio, or streamable HTTP)")
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: one agent starts it) or http (streamable HTTP, many callers, "
        "and the web view at /ui/)",
    )
    add_serving_options(p, port=7500)
    p.set_defaults(func=cmd_serve)
    ui = sub.add_parser("ui", help="serve the web view and print a one-time login link")
    add_serving_options(ui, port=7510)
    ui.set_defaults(func=cmd_ui)


def add_serving_options(p: argparse.ArgumentParser, port: int) -> None:
    """The options of ``serve`` that ``ui`` shares (all but ``--transport``)."""
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=port, help=f"HTTP port (default {port})")
    p.add_argument("--quiet", action="store_true", help="do not print the 'serving' line")
    p.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="URL",
        help="also ask this peer server (repeatable; adds to $BOURDON_HOME/peers.yaml): a URL, "
        "named after its host and port, or NAME=URL; its token is read from "
        "$BOURDON_PEER_TOKEN_<NAME>, else $BOURDON_PEER_TOKEN",
    )
    p.add_argument(
        "--peers-config",
        metavar="PATH",
        help="read the peers from PATH instead of $BOURDON_HOME/peers.yaml",
    )
    p.add_argument(
        "--federate",
        action="store_true",
        help="accepted for the reference's configs: $BOURDON_HOME/peers.yaml is read anyway",
    )
    p.add_argument(
        "--no-peers",
        action="store_true",
        help="ask no peer at all, not even those of peers.yaml",
    )
    p.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="HTTP on loopback only: requests without a token read public rows and write "
        "nothing (a wrong token is still refused)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also answer to this Host name (repeatable; and $BOURDON_ALLOWED_HOSTS, "
        "comma-separated), e.g. behind a proxy",
    )
    p.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept this browser Origin (repeatable; and $BOURDON_ALLOWED_ORIGINS)",
    )
    p.add_argument(
        "--http-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="HTTP: close a connection whose request has not arrived whole S seconds after "
        "its first byte, and end a response stream idle for S seconds (default 10)",
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
        "--peer-backoff",
        type=float,
        default=1.0,
        metavar="S",
        help="skip a peer that timed out or failed to connect for S seconds, doubled after "
        "each failure in a row, then try it again (default 1; 0: ask every peer on every call)",
    )
    p.add_argument(
        "--peer-backoff-max",
        type=float,
        default=60.0,
        metavar="S",
        help="skip a failing peer for at most S seconds at a time (default 60)",
    )
    p.add_argument(
        "--no-watch",
        action="store_true",
        help="do not watch agents/ for edits (commits are still seen on each call)",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    return run(args, http=args.transport == "http")


def cmd_ui(args: argparse.Namespace) -> int:
    return run(args, http=True, operator_link=True)


def run(args: argparse.Namespace, *, http: bool, operator_link: bool = False) -> int:
    from bourdon.access.trust import MemberRegistry
    from bourdon.cli.shared import home_path as home
    from bourdon.serve import launch
    from bourdon.serve.server import create_server
    from bourdon.store.library import Library

    if not 0 < args.port < 65536:
        raise InputError(f"--port must be from 1 to 65535, got {args.port}")
    if not 0 < args.http_timeout <= 3600:
        raise InputError(
            f"--http-timeout must be more than 0 and at most 3600, got {args.http_timeout:g}"
        )
    backoff = launch.peer_backoff(args.peer_backoff, args.peer_backoff_max)
    door = launch.Door(
        args.host,
        args.port,
        args.allow_unauthenticated,
        tuple(listed(args.allowed_host, "BOURDON_ALLOWED_HOSTS")),
        tuple(listed(args.allowed_origin, "BOURDON_ALLOWED_ORIGINS")),
        timeout=args.http_timeout,
    )
    registry = MemberRegistry(home())
    if http:
        launch.check_door(door, registry.active_count())
    peers, peers_file = chosen_peers(args)
    root = library_path(args).absolute()
    Library.open(root).close()
    # Logs go to stderr: under stdio, stdout carries the protocol and nothing else.
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="bourdon: %(levelname)s %(message)s"
    )
    deadlines = (max(0.01, args.recognition_deadline), max(0.01, args.peer_deadline))
    server = create_server(
        root,
        watch=not args.no_watch,
        home=home(),
        peers=peers,
        peers_file=peers_file,
        deadlines=deadlines,
        peer_backoff=backoff,
    )
    # The index is long-lived: move it out of the collector's way, so full collections (which
    # would otherwise rescan every row) do not pause answers for a hundred milliseconds.
    import gc

    gc.freeze()
    agents, skipped = launch.server_state(server)
    skipped_note = f", {skipped} skipped (see warnings)" if skipped else ""
    say = (lambda text: None) if args.quiet else announce
    if not http:
        say(
            f"serving {root} ({output.plural(agents, 'agent')}{skipped_note}) over stdio; "
            f"MCP client config: {json.dumps(launch.client_config(root))}"
        )
        launch.serve_stdio(server)
        return 0
    serving = f"serving {root} ({output.plural(agents, 'agent')}{skipped_note})"
    launch.serve_http(server, door, registry, say, serving, operator_link=operator_link)
    return 0


def chosen_peers(args: argparse.Namespace) -> tuple[list[Peer], bool]:
    """The ``--peer`` peers and those of ``--peers-config``, and whether ``peers.yaml`` is
    read too (not with ``--peers-config`` or ``--no-peers``)."""
    from bourdon.federation.peers import parse_peer

    if args.no_peers:
        if args.peer or args.peers_config or args.federate:
            raise InputError(
                "--no-peers cannot be combined with --peer, --peers-config or --federate"
            )
        return [], False
    peers = [parse_peer(text) for text in args.peer]
    if args.peers_config is None:
        return peers, True
    return [*peers_in(Path(args.peers_config).expanduser()), *peers], False


def peers_in(path: Path) -> list[Peer]:
    """The peers a ``peers.yaml``-shaped file lists; a missing or unreadable one stops start-up
    (as in the reference: a chosen file that cannot be used is a mistake, not "no peers")."""
    from bourdon.errors import BourdonError
    from bourdon.federation.peers import PeerList

    if not path.is_file():
        raise InputError(f"--peers-config {path}: no such file")
    try:
        return PeerList(path.parent, path).peers()
    except BourdonError as exc:
        raise InputError(f"--peers-config {path}: {exc.message}") from None


def listed(given: list[str], variable: str) -> list[str]:
    """A repeatable option's values and those of its comma-separated variable, in order,
    without duplicates (the union, as the reference takes them)."""
    values = [*given, *(part.strip() for part in os.environ.get(variable, "").split(","))]
    return list(dict.fromkeys(value for value in values if value))


def announce(text: str) -> None:
    sys.stderr.write(f"bourdon: {text}\n")
    sys.stderr.flush()
