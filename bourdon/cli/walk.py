"""``bourdon neighbors`` and ``bourdon slice``: the traversal tools, for people.

They answer from ``bourdon.query.walk`` in-process, like the MCP tools; team rows by default,
``--private`` adds private ones.
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import levels, load_index, warn


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_access, add_json, add_limit

    p = sub.add_parser("neighbors", help="the rows around a name or row id, nearest first")
    p.add_argument("name", metavar="NAME", nargs="+", help="entity names or row ids (up to 8)")
    p.add_argument("--depth", type=int, default=1, metavar="N", help="hops to walk (1-3)")
    add_limit(p, default=8, most=24, what="rows to show")
    p.add_argument(
        "--relationship",
        action="append",
        metavar="REL",
        help="follow only this edge (RELATED_TO, FOCUSES_ON, TOUCHES, MENTIONS); repeatable",
    )
    p.add_argument("--type", action="append", metavar="TYPE", help="show only this kind or type")
    p.add_argument("--outgoing-only", action="store_true", help="do not follow edges backwards")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_neighbors)

    p = sub.add_parser("slice", help="the rows dated around one row (by its id)")
    p.add_argument("id", metavar="ID", help="a row id, as `bourdon neighbors` prints them")
    p.add_argument("--window", type=int, default=3, metavar="N", help="rows to show (1-64)")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_slice)


def cmd_neighbors(args: argparse.Namespace) -> int:
    from bourdon.query import walk

    answer = walk.expand_neighbors(
        load_index(args),
        args.name,
        args.depth,
        args.limit,
        args.relationship,
        args.type,
        500,
        not args.outgoing_only,
        *levels(args),
    )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    for seed in answer["unresolved"]:
        output.error(f"not found: {seed}")
    if not answer["neighbors"]:
        print("No neighbours." if answer["origins"] else "Nothing to walk from.")
        return 0
    output.table(
        ["HOP", "SCORE", "REL", "KIND", "NAME", "ID"],
        [
            [n["distance"], n["score"], _arrow(n), n["type"], n["name"][:48], n["id"]]
            for n in answer["neighbors"]
        ],
    )
    more = " (truncated: raise --limit)" if answer["truncated"] else ""
    print(f"\n{len(answer['neighbors'])} of {answer['total']} at depth {answer['depth']}{more}")
    return 0


def _arrow(n: dict[str, Any]) -> str:
    return ("<-" if n["direction"] == "incoming" else "->") + str(n["relationship"])


def cmd_slice(args: argparse.Namespace) -> int:
    from bourdon.query import walk
    from bourdon.query.rowid import KINDS

    kind = args.id.partition(":")[0]
    answer = walk.fetch_slice(
        load_index(args),
        kind if kind in KINDS else "entity",
        args.id,
        args.window,
        18000,
        *levels(args),
    )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    print(f"{answer['parent_type']} {answer['parent_name']}  ({answer['parent_id']})")
    for p in answer["passages"]:
        print(f"\n[{p['passage_index'] + 1}/{p['passage_total']}] {p['breadcrumb']}  {p['id']}")
        print(f"  {p['content']}")
    print(f"\n{len(answer['passages'])} of {answer['total']} (window {answer['window']})")
    return 0


