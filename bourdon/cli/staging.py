"""``bourdon staging list|show|promote|reject``: quarantined writes waiting for the operator."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import open_library, report_write
from bourdon.digest import digest8
from bourdon.errors import InputError, NotFoundError
from bourdon.formats import yamlio

if TYPE_CHECKING:
    from bourdon.store.library import Library


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
        v.add_argument("agent", metavar="AGENT")
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


def _caller(library: Library, agent: str, caller: str | None) -> str:
    callers = [s.caller for s in library.staged() if s.agent_id == agent]
    if caller:
        if caller not in callers:
            raise NotFoundError(
                f"{caller!r} has no staged write for {agent!r}; see 'bourdon staging list'"
            )
        return caller
    if not callers:
        raise NotFoundError(f"nothing is staged for {agent!r}; see 'bourdon staging list'")
    if len(callers) > 1:
        raise InputError(
            f"several callers staged {agent!r} ({', '.join(callers)}); pick one with --from"
        )
    return callers[0]


def cmd_show(args: argparse.Namespace) -> int:
    library = open_library(args)
    caller = _caller(library, args.agent, args.caller)
    staged = library.read_staged(caller, args.agent)
    if args.json:
        output.print_json({"agent_id": args.agent, "caller": caller, "manifest": staged.data})
    else:
        sys.stdout.buffer.write(yamlio.dump(staged.data))
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    library = open_library(args)
    result = library.promote(_caller(library, args.agent, args.caller), args.agent)
    report_write(result, args.json)
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    library = open_library(args)
    caller = _caller(library, args.agent, args.caller)
    version = library.reject(caller, args.agent)
    if args.json:
        output.print_json(
            {"agent_id": args.agent, "caller": caller, "rejected": True, "version_id": version}
        )
    else:
        short = output.short(version)
        print(f"Rejected the staged write of {caller} for {args.agent} (version {short})")
    return 0
