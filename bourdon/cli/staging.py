"""``bourdon staging list|show|promote|reject``: quarantined writes waiting for the operator."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bourdon.access.redact import redacted
from bourdon.cli import output
from bourdon.cli.shared import open_library, report_write
from bourdon.digest import digest8
from bourdon.formats import yamlio

if TYPE_CHECKING:
    pass


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("staging", help="review writes from quarantined callers")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    v = verbs.add_parser("list", help="staged writes waiting, oldest first")
    add_json(v)
    v.set_defaults(func=cmd_list)
    for name, func, text in (
        ("show", cmd_show, "print a staged write"),
        ("promote", cmd_promote, "merge a staged write into the live manifest"),
        ("reject", cmd_reject, "drop a staged write (it stays in history)"),
    ):
        v = verbs.add_parser(name, help=text)
        v.add_argument("agent", metavar="AGENT", help="the agent the staged write is for")
        v.add_argument(
            "--from",
            dest="caller",
            metavar="CALLER",
            help="whose staged write, when several callers staged this agent",
        )
        add_json(v)
        v.set_defaults(func=func)


def cmd_list(args: argparse.Namespace) -> int:
    staged = open_library(args).staged()
    if args.json:
        output.print_json({"staged": [s.__dict__ for s in staged]})
        return 0
    if not staged:
        print("Nothing is waiting in staging.")
        return 0
    output.table(
        ["AGENT", "FROM", "ROWS", "STAGED AT", "DIGEST"],
        [[s.agent_id, s.caller, s.rows, s.staged_at, digest8(s.digest)] for s in staged],
    )
    return 0


def _staged_caller(library: Any, args: argparse.Namespace) -> str:
    from bourdon.store.staging import staged_caller  # on use: `bourdon --help` stays light

    return staged_caller(library.staged(), args.agent, args.caller)


def cmd_show(args: argparse.Namespace) -> int:
    library = open_library(args)
    caller = _staged_caller(library, args)
    staged = library.read_staged(caller, args.agent)
    if args.json:
        output.print_json({"agent_id": args.agent, "caller": caller, "manifest": staged.data})
    else:
        sys.stdout.buffer.write(yamlio.dump(staged.data))
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    library = open_library(args)
    result = library.promote(_staged_caller(library, args), args.agent, clean=redacted)
    report_write(result, args.json)
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    library = open_library(args)
    caller = _staged_caller(library, args)
    version = library.reject(caller, args.agent)
    if args.json:
        output.print_json(
            {"agent_id": args.agent, "caller": caller, "rejected": True, "version_id": version}
        )
    else:
        short = output.short(version)
        print(f"Rejected the staged write of {caller} for {args.agent} (version {short})")
    return 0
