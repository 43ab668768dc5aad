"""``bourdon search QUERY``: full-text search over the library, for people and scripts.

It answers from the function the MCP tool ``search_federation`` calls
(``bourdon.query.search``), in-process: ``--json`` prints the very dict the tool returns
(local rows only: the CLI never asks peers).
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_access, add_json, add_limit

    p = sub.add_parser("search", help="full-text search over every agent's rows (BM25)")
    p.add_argument("query", metavar="QUERY", help='words, "a phrase", or a prefix*')
    p.add_argument("--agent", metavar="AGENT", help="only this agent's rows")
    p.add_argument(
        "--kind", choices=("entity", "session", "workstream", "note"), help="only rows of a kind"
    )
    p.add_argument("--since", metavar="DATE", help="only rows dated on or after (ISO date)")
    p.add_argument("--until", metavar="DATE", help="only rows dated on or before (ISO date)")
    add_limit(p, default=None, most=50, what="results per page", shown_default=5)
    p.add_argument("--cursor", metavar="C", help="next_cursor of a previous page")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    from bourdon.cli.shared import levels, load_index
    from bourdon.query.search import search_federation

    index = load_index(args)
    level, include_private = levels(args)
    answer = search_federation(
        index,
        args.query,
        access_level=level,
        include_private=include_private,
        agent=args.agent,
        kind=args.kind,
        since=args.since,
        until=args.until,
        limit=args.limit,
        cursor=args.cursor,
    )
    if args.json:
        output.print_json(answer)
        return 0
    for warning in answer["meta"]["warnings"]:
        output.error(f"warning: {warning}")
    if not answer["results"]:
        print(f"Nothing matches {args.query!r}.")
        return 0
    output.table(
        ["SCORE", "KIND", "AGENT", "ROW", "SNIPPET"],
        [
            [
                f"{result['score']:.3f}",
                result["source"],
                result["metadata"]["agent"],
                result["metadata"].get("name") or result["metadata"].get("date") or "",
                result["snippet"],
            ]
            for result in answer["results"]
        ],
    )
    shown = len(answer["results"])
    print(f"{shown} of {output.plural(answer['meta']['matched'], 'match', 'matches')}.")
    if answer["has_more"]:
        print(f"More: --cursor {answer['next_cursor']}")
    return 0
