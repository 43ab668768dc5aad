"""``bourdon trace NAME``: an entity's timeline across agents, from the library's history.

It answers from the function the MCP tool uses (``bourdon.query.trace``), in-process. People
reading their own library see team rows by default; ``--private`` adds private rows.
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import open_library


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("trace", help="an entity's timeline: who recorded and changed it, when")
    p.add_argument("name", metavar="NAME", help="the entity's name or one of its aliases")
    p.add_argument("--agent", metavar="AGENT", help="only this agent's history")
    p.add_argument(
        "--access-level",
        choices=("public", "team", "private"),
        default="team",
        help="the widest visibility to show (default: team)",
    )
    p.add_argument("--private", action="store_true", help="same as --access-level private")
    p.add_argument("--limit", type=int, metavar="N", help="the newest N events (default 200)")
    add_json(p)
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    from bourdon.query.trace import trace_entity

    level = "private" if args.private else args.access_level
    library = open_library(args)
    answer = trace_entity(
        library, args.name, level, level == "private", agent=args.agent, limit=args.limit
    )
    if args.json:
        output.print_json(answer)
        return 0
    warning = answer["meta"].get("warning")
    if warning:
        output.error(f"warning: {warning}")
    if not answer["matched"]:
        print(f"No agent's memory ever held {args.name!r}.")
        return 0
    print(f"{answer['name']}  (known now by: {', '.join(answer['known_by']) or 'no agent'})")
    for label, key in (("types", "types"), ("aliases", "aliases"), ("tags", "tags")):
        if answer[key]:
            print(f"  {label}: {', '.join(answer[key])}")
    print(f"  first seen {answer['first_seen']}, last touched {answer['last_touched']}")
    print()
    output.table(
        ["TIME", "AGENT", "KIND", "BY", "VERSION", "WHAT"],
        [
            [
                e["timestamp"],
                e["agent_id"],
                e["kind"],
                e["by"],
                output.short(e["commit"]),
                e["description"] + (f" (session {e['session']})" if e["session"] else ""),
            ]
            for e in answer["timeline"]
        ],
    )
    if answer["meta"]["truncated"]:
        print(f"\n(the newest {answer['meta']['limit']} of {answer['meta']['events']} events)")
    return 0
