"""``bourdon peers list|add|remove|check``: other machines' servers this one asks (depth 1)."""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import check_peers, home_path


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("peers", help="the other bourdon servers this one asks, depth 1")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    v = verbs.add_parser("list", help="the configured peers")
    add_json(v)
    v.set_defaults(func=cmd_list)

    v = verbs.add_parser("add", help="add (or change) a peer")
    v.add_argument("name", metavar="NAME", help="a short name for the peer, e.g. desktop")
    v.add_argument("url", metavar="URL", help="its MCP endpoint, e.g. http://desktop:7500/mcp")
    v.add_argument(
        "--token-env",
        metavar="VAR",
        help="environment variable holding the token this machine presents to it "
        "(default BOURDON_PEER_TOKEN_<NAME>)",
    )
    add_json(v)
    v.set_defaults(func=cmd_add)

    v = verbs.add_parser("remove", help="forget a peer")
    v.add_argument("name", metavar="NAME", help="the peer's name, as 'bourdon peers list' shows it")
    add_json(v)
    v.set_defaults(func=cmd_remove)

    v = verbs.add_parser("check", help="ask every peer once: reachable, how fast, how many agents")
    v.add_argument(
        "--deadline",
        type=float,
        default=5.0,
        metavar="S",
        help="give up on a peer after S seconds (default 5)",
    )
    add_json(v)
    v.set_defaults(func=cmd_check)


def _peers() -> Any:
    from bourdon.federation.peers import PeerList

    return PeerList(home_path())


def cmd_list(args: argparse.Namespace) -> int:
    peers = _peers().peers()
    if args.json:
        output.print_json({"peers": [p.to_dict() for p in peers]})
    elif not peers:
        print("No peers. Add one: bourdon peers add NAME http://HOST:7500/mcp")
    else:
        output.table(["NAME", "URL", "TOKEN FROM"], [[p.name, p.url, p.token_env] for p in peers])
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bourdon.federation.peers import parse_peer
    from bourdon.serve.config import default_token_env

    peer = parse_peer(f"{args.name}={args.url}")
    peer = replace(peer, token_env=args.token_env or default_token_env(peer.name))
    _peers().add(peer)
    if args.json:
        output.print_json(peer.to_dict())
    else:
        print(f"Added peer {peer.name} at {peer.url}; its token is read from ${peer.token_env}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    _peers().remove(args.name)
    if args.json:
        output.print_json({"removed": args.name})
    else:
        print(f"Removed peer {args.name}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    found = check_peers(max(0.1, args.deadline))
    if found is None:
        if args.json:
            output.print_json({"peers": []})
        else:
            print("No peers to check. Add one: bourdon peers add NAME http://HOST:7500/mcp")
        return 0
    rows = [
        {"peer": name, **{k: o[k] for k in ("reachable", "latency_ms", "agents", "problem")}}
        for name, o in found.items()
    ]
    if args.json:
        output.print_json({"peers": rows})
    else:
        output.table(
            ["PEER", "REACHABLE", "LATENCY MS", "AGENTS", "PROBLEM"],
            [
                [
                    r["peer"],
                    "yes" if r["reachable"] else "NO",
                    r["latency_ms"],
                    r["agents"],
                    r["problem"],
                ]
                for r in rows
            ],
        )
    return 0 if all(r["reachable"] for r in rows) else 7
