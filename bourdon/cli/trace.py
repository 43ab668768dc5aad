"""``bourdon trace NAME``: an entity's timeline across agents, from the library's history.

It answers from the function the MCP tool uses (``bourdon.query.trace``), in-process. People
reading their own library see team rows by default; ``--private`` adds private rows.
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import levels, open_library


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_access, add_json, add_limit

    p = sub.add_parser("trace", help="an entity's timeline: who recorded and changed it, when")
    p.add_argument("name", metavar="NAME", help="the entity's name or one of its aliases")
    p.add_argument("--agent", metavar="AGENT", help="only this agent's history")
    add_access(p)
    add_limit(p, default=None, most=1000, what="the newest N events", shown_default=200)
    add_json(p)
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace) -> int:
    from bourdon.query.trace import trace_entity

    library = open_library(args)
    answer = trace_entity(library, args.name, *levels(args), agent=args.agent, limit=args.limit)
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
        events = output.plural(answer["meta"]["events"], "event")
        print(f"\n(the newest {answer['meta']['limit']} of {events})")
    return 0
