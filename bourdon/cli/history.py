"""``bourdon show``, ``history``, ``diff``, ``explain`` and ``rollback``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import open_library, report_write, unified_diff
from bourdon.digest import digest, digest8, is_current, parse_digest
from bourdon.errors import ConflictError

if TYPE_CHECKING:
    from bourdon.merge.twoway import RowChanges
    from bourdon.store.history import Version


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json, add_limit

    p = sub.add_parser("show", help="print an agent's manifest (now, or at a version)")
    p.add_argument("agent", metavar="AGENT", help="the agent, as 'bourdon agents' lists it")
    p.add_argument("--version", metavar="V", help="a version id from 'bourdon history'")
    add_json(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("history", help="list the versions of an agent's memory, newest first")
    p.add_argument("agent", metavar="AGENT", help="the agent, as 'bourdon agents' lists it")
    add_limit(p, default=20, most=None, what="the newest N versions")
    add_json(p)
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("diff", help="what changed between two versions (V2 default: now)")
    p.add_argument("agent", metavar="AGENT", help="the agent, as 'bourdon agents' lists it")
    p.add_argument("old", metavar="V1", help="the earlier version (an id from 'bourdon history')")
    p.add_argument("new", metavar="V2", nargs="?", help="the later version (default: now)")
    add_json(p)
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("explain", help="which write produced a digest, and what it changed")
    p.add_argument("agent", metavar="AGENT", help="the agent, as 'bourdon agents' lists it")
    p.add_argument("digest", metavar="DIGEST", help="a full digest or its first 8 hex characters")
    add_json(p)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("rollback", help="restore an earlier version as a new commit (undoable)")
    p.add_argument("agent", metavar="AGENT", help="the agent, as 'bourdon agents' lists it")
    p.add_argument(
        "version", metavar="VERSION", help="the version to restore, from 'bourdon history'"
    )
    p.add_argument(
        "--expected-digest", metavar="D", help="refuse unless the current digest is still D"
    )
    p.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    add_json(p)
    p.set_defaults(func=cmd_rollback)


def cmd_show(args: argparse.Namespace) -> int:
    library = open_library(args)
    raw = library.read_bytes(args.agent, args.version)
    if args.json:
        data = library.read(args.agent, args.version).data
        output.print_json(
            {
                "agent_id": args.agent,
                "version": args.version,
                "digest": digest(data),
                "manifest": data,
            }
        )
    else:
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    versions = open_library(args).history(args.agent, limit=args.limit)
    if args.json:
        output.print_json({"agent_id": args.agent, "versions": [v.to_dict() for v in versions]})
        return 0
    output.table(
        ["VERSION", "TIME", "OP", "CALLER", "DIGEST", "SUBJECT"],
        [
            [output.short(v.version_id), v.time, v.op, v.caller, v.digest8, _subject(v)]
            for v in versions
        ],
    )
    for v in versions:  # a sync's conflicts: which row, which fields, who won
        for conflict in v.conflicts:
            print(f"  {output.short(v.version_id)} conflict: {conflict}")
    return 0


def _subject(version: Version) -> str:
    """A sync also names what it merged: the remote's version and both sides' digests."""
    if not version.theirs:
        return version.subject
    ours, theirs = (digest8(d) if d else "-" for d in (version.ours_digest, version.theirs_digest))
    return (
        f"{version.subject} (merged {version.remote} version {output.short(version.theirs)}: "
        f"{ours} + {theirs})"
    )


def cmd_diff(args: argparse.Namespace) -> int:
    library = open_library(args)
    changes = library.diff(args.agent, args.old, args.new)
    if args.json:
        output.print_json(
            {
                "agent_id": args.agent,
                "from": args.old,
                "to": args.new or "HEAD",
                **changes.to_dict(),
            }
        )
        return 0
    print_changes(changes)
    text = unified_diff(
        library.read_bytes(args.agent, args.old),
        library.read_bytes(args.agent, args.new),
        f"{args.agent}@{args.old[:12]}",
        f"{args.agent}@{(args.new or 'HEAD')[:12]}",
    )
    if text:
        print()
        sys.stdout.write(text)
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    found = open_library(args).explain(args.agent, args.digest)
    v = found.version
    if args.json:
        output.print_json(
            {
                "agent_id": args.agent,
                **v.to_dict(),
                "changes": found.changes.to_dict(),
                "again_in": found.again_in,
            }
        )
        return 0
    print(
        f"{v.digest8} of {args.agent} was written by {v.caller or 'an unknown caller'} "
        f"({v.op}) at {v.time}"
    )
    print(f"  version     {v.version_id}")
    print(f"  session     {v.session or '-'}")
    print(f"  transcript  {v.transcript or '-'}")
    if v.stager:
        print(f"  staged by   {v.stager}")
    print_changes(found.changes)
    if found.again_in:
        later = ", ".join(output.short(v) for v in found.again_in)
        print(f"  the same state was restored later by {later}")
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    library = open_library(args)
    if args.dry_run:
        changes = library.diff(args.agent, library.head() or "", args.version)
        current = library.current_digest(args.agent)
        expected = args.expected_digest
        if expected and not is_current(current, parse_digest(expected, "--expected-digest")):
            raise ConflictError(
                f"{args.agent!r} changed: --expected-digest {args.expected_digest} is stale; "
                f"the current digest is {current}",
                current_digest=current,
            )
        if args.json:
            output.print_json(
                {
                    "agent_id": args.agent,
                    "preview": True,
                    "current_digest": current,
                    **changes.to_dict(),
                }
            )
        else:
            print(f"Rolling {args.agent} back to {args.version[:12]} would change:")
            print_changes(changes)
            guard = f" --expected-digest {digest8(current)}" if current else ""
            print(f"To do it: bourdon rollback {args.agent} {args.version}{guard}")
        return 0
    result = library.rollback(args.agent, args.version, expected_digest=args.expected_digest)
    report_write(result, args.json)
    return 0


def print_changes(changes: RowChanges) -> None:
    if changes.empty:
        print("  no row changed")
        return
    if changes.agent_changed:
        print("  ~ agent block")
    for mark, part in (("+", changes.added), ("-", changes.removed), ("~", changes.changed)):
        for section, rows in part.items():
            for row in rows:
                print(f"  {mark} {section}: {row}")
