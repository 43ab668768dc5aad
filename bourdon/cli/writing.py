"""``bourdon init``, ``validate`` and ``commit``."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.access.redact import redacted
from bourdon.cli import output
from bourdon.cli.shared import library_path, open_library, read_input, report_write
from bourdon.errors import InputError, LibraryError
from bourdon.formats import yamlio

SHOWN_WARNINGS = 10  # an adoption may warn about hundreds of versions; --json has them all

if TYPE_CHECKING:
    from bourdon.store.adopt import Adoption


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser(
        "init",
        help="create a library (a git repository of manifests), or adopt a reference library",
    )
    p.add_argument("path", nargs="?", help="where (default: the --library path)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what adopting a reference library would do; change nothing",
    )
    add_json(p)
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("validate", help="check manifests against the schema")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to check (default: the library)")
    p.add_argument(
        "--as-read",
        action="store_true",
        help="check what bourdon reads and serves (wider than what it writes); name the rows "
        "it would leave out",
    )
    add_json(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("commit", help="merge or replace rows into an agent's manifest")
    p.add_argument("agent", metavar="AGENT", help="the agent whose manifest receives the rows")
    p.add_argument(
        "--file",
        "-f",
        required=True,
        metavar="F",
        help="YAML in the manifest's shape with the rows to commit ('-': stdin)",
    )
    p.add_argument(
        "--mode",
        choices=("merge", "replace"),
        default="merge",
        help="merge into the rows there (default) or replace them all",
    )
    p.add_argument(
        "--expected-digest",
        metavar="D",
        help="refuse the write unless the manifest's digest is still D",
    )
    p.add_argument(
        "--allow-lower-visibility",
        action="store_true",
        help="let the file lower rows' visibility (without it a row keeps at least the "
        "visibility it has); the commit names each row lowered",
    )
    add_json(p)
    p.set_defaults(func=cmd_commit)


def cmd_init(args: argparse.Namespace) -> int:
    from bourdon.serve.config import machine_name
    from bourdon.store import adopt
    from bourdon.store.layout import AGENTS
    from bourdon.store.library import Library

    root = (Path(args.path).expanduser() if args.path else library_path(args)).absolute()
    existed = (root / ".git").exists() and (root / AGENTS).is_dir()
    plan = adopt.plan(root, output.error) if adopt.is_reference_library(root) else None
    if args.dry_run:
        return _show_plan(root, plan, existed, args.json)
    library = Library.init(root, machine=machine_name(), progress=output.error, adoption=plan)
    if args.json:
        found: dict[str, Any] = {"library": str(library.root), "created": not existed}
        if plan is not None:
            found.update(adopted=True, adoption=plan.to_dict())
        output.print_json(found)
    elif plan is not None:
        _print_plan(plan, done=True)
        print(f"  serve it:    bourdon serve --library {library.root}")
    elif existed:
        agents = output.plural(len(library.agent_ids()), "agent")
        print(f"{library.root} is already a library ({agents})")
    else:
        print(f"Created an empty library at {library.root}")
        print(f"  add memory:  bourdon --library {library.root} commit AGENT --file rows.yaml")
    return 0


def _show_plan(root: Path, plan: Adoption | None, existed: bool, as_json: bool) -> int:
    """``init --dry-run``: what init would do, without doing it."""
    if as_json:
        would = "adopt" if plan else ("nothing" if existed else "create")
        output.print_json(
            {
                "library": str(root),
                "would": would,
                "dry_run": True,
                **({"adoption": plan.to_dict()} if plan else {}),
            }
        )
    elif plan is not None:
        _print_plan(plan, done=False)
    else:
        print(
            f"{root} is already a library; init would change nothing"
            if existed
            else f"Would create an empty library at {root}"
        )
    return 0


def _print_plan(plan: Adoption, *, done: bool) -> None:
    facts = plan.to_dict()
    verb = "Adopted" if done else "Would adopt"
    print(
        f"{verb} the reference library at {plan.root}: "
        f"{output.plural(facts['commits'], 'version')} of "
        f"{output.plural(len(facts['agents']), 'agent')} as git history"
    )
    for agent, counts in facts["agents"].items():
        print(
            f"  {agent}: {output.plural(counts['versions'], 'version')} "
            f"({counts['snapshots']} from "
            "versions/), "
            f"{counts['provenance_matched']} matched to its {counts['provenance_lines']} "
            "provenance lines"
        )
    if plan.staged:
        print(f"  staged writes kept for 'bourdon staging': {', '.join(plan.staged)}")
    if plan.moved:
        where = "moved" if done else "would move"
        print(f"  {where} under {facts['moved_to']}/: {', '.join(plan.moved)}")
    if plan.untouched:
        where = "left" if done else "would leave"
        print(f"  {where} in place, not committed: {', '.join(plan.untouched)}")
    for warning in plan.warnings[:SHOWN_WARNINGS]:
        output.error(f"warning: {warning}")
    if len(plan.warnings) > SHOWN_WARNINGS:
        more = len(plan.warnings) - SHOWN_WARNINGS
        output.error(f"warning: and {more} more (--json lists every one)")


def cmd_validate(args: argparse.Namespace) -> int:
    from bourdon.model import AGENTS_DIR
    from bourdon.status.validation import Read, library_files, validate

    if args.files:
        targets: list[tuple[str, Read]] = [
            (name, functools.partial(read_input, name)) for name in args.files
        ]
    else:
        root = library_path(args)
        if not (root / AGENTS_DIR).is_dir():
            raise LibraryError(f"{root} is not a library; pass files, or --library PATH")
        targets = library_files(root)
    results = validate(targets, as_read=args.as_read)
    bad = [r for r in results if not r["valid"]]
    if args.json:
        output.print_json({"files": results, "valid": len(results) - len(bad), "invalid": len(bad)})
    else:
        for r in results:
            note = ""
            if r.get("served_whole") and not r["valid"]:
                note = "  (bourdon reads and serves it whole: see --as-read)"
            print(f"{'ok     ' if r['valid'] else 'INVALID'}  {r['path']}{note}")
            for problem in r["problems"]:
                print(f"         {problem}")
        print(f"{len(results) - len(bad)} valid, {len(bad)} invalid")
    return 3 if bad else 0


def cmd_commit(args: argparse.Namespace) -> int:
    change = yamlio.load(read_input(args.file), what=args.file)
    if not isinstance(change, dict):
        raise InputError(f"{args.file} must hold a mapping in the manifest's shape")
    library = open_library(args)
    result = library.commit(
        args.agent,
        redacted(change),
        mode=args.mode,
        expected_digest=args.expected_digest,
        allow_lower_visibility=args.allow_lower_visibility,
    )
    report_write(result, args.json)
    return 0
