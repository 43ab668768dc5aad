"""``bourdon init``, ``validate`` and ``commit``."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import library_path, open_library, read_input
from bourdon.digest import digest8
from bourdon.errors import BourdonError, InputError, LibraryError
from bourdon.formats import yamlio

SHOWN_WARNINGS = 10  # an adoption may warn about hundreds of versions; --json has them all

if TYPE_CHECKING:
    from bourdon.store.adopt import Adoption
    from bourdon.store.writes import WriteResult


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
    p.add_argument("agent", metavar="AGENT")
    p.add_argument(
        "--file",
        "-f",
        required=True,
        metavar="F",
        help="YAML in the manifest's shape with the rows to commit ('-': stdin)",
    )
    p.add_argument("--mode", choices=("merge", "replace"), default="merge")
    p.add_argument(
        "--expected-digest",
        metavar="D",
        help="refuse the write unless the manifest's digest is still D",
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
        print(f"{library.root} is already a library ({len(library.agent_ids())} agents)")
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
        f"{verb} the reference library at {plan.root}: {facts['commits']} versions of "
        f"{len(facts['agents'])} agents as git history"
    )
    for agent, counts in facts["agents"].items():
        plural = "" if counts["versions"] == 1 else "s"
        print(
            f"  {agent}: {counts['versions']} version{plural} ({counts['snapshots']} from "
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
    from bourdon.formats.reading import read_manifest
    from bourdon.formats.schema import load_manifest
    from bourdon.model import AGENTS_DIR as AGENTS
    from bourdon.model import STAGING_DIR as STAGING
    from bourdon.model import SUFFIX

    if args.files:
        targets: list[tuple[str, Callable[[], bytes]]] = [
            (name, functools.partial(read_input, name)) for name in args.files
        ]
    else:
        root = library_path(args)
        if not (root / AGENTS).is_dir():
            raise LibraryError(f"{root} is not a library; pass files, or --library PATH")
        paths = sorted((root / AGENTS).glob(f"*{SUFFIX}")) + sorted(
            (root / STAGING).glob(f"*/*{SUFFIX}")
        )
        targets = [(str(p.relative_to(root)), p.read_bytes) for p in paths]
    results: list[dict[str, Any]] = []
    for name, read in targets:
        try:
            raw = read()
        except BourdonError as exc:
            results.append({"path": name, "valid": False, "problems": [exc.message]})
            continue
        # What bourdon serves of it: the rows it would leave out, or why it skips it whole.
        try:
            served: list[str] | None = [
                p.message(name) for p in read_manifest(raw, what=name).problems
            ]
        except BourdonError as exc:
            served = None
            unserved = getattr(exc, "problems", None) or [exc.message]
        if args.as_read:
            problems = unserved if served is None else served
            results.append({"path": name, "valid": not problems, "problems": problems})
            continue
        try:
            load_manifest(raw, what=name)
            results.append({"path": name, "valid": True, "problems": [], "served_whole": True})
        except BourdonError as exc:
            problems = getattr(exc, "problems", None) or [exc.message]
            results.append(
                {"path": name, "valid": False, "problems": problems, "served_whole": served == []}
            )
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
        args.agent, change, mode=args.mode, expected_digest=args.expected_digest
    )
    report(result, args.json)
    return 0


def write_summary(result: WriteResult) -> dict[str, Any]:
    """The commit summary of the wire contract (``no_op`` only when nothing was written)."""
    summary: dict[str, Any] = {
        "agent_id": result.agent_id,
        "op": result.op,
        "added": result.stats.total_added,
        "updated": result.stats.total_updated,
        "removed": result.stats.total_removed,
        "total": result.totals.get("total", 0),
        "counts": {k: v for k, v in result.totals.items() if k != "total"},
        "path": result.path,
        "digest": result.digest,
        "digest8": digest8(result.digest),
        "previous_digest": result.previous_digest,
        "version_id": result.version,
        "last_updated": result.last_updated,
    }
    if result.no_op:
        summary["no_op"] = True
    if result.staged:
        summary["staged"] = True
    return summary


def report(result: WriteResult, as_json: bool) -> None:
    if as_json:
        output.print_json(write_summary(result))
        return
    if result.no_op:
        short = digest8(result.digest)
        print(f"No change: {result.agent_id} already holds these rows (digest {short})")
        return
    verb = {
        "merge": "Merged into",
        "replace": "Replaced",
        "rollback": "Rolled back",
        "promote": "Promoted into",
        "stage": "Staged for",
    }.get(result.op, result.op)
    s = result.stats
    print(
        f"{verb} {result.agent_id}: +{s.total_added} added, ~{s.total_updated} updated, "
        f"-{s.total_removed} removed ({result.totals.get('total', 0)} rows in all)"
    )
    print(f"  version {output.short(result.version)}  digest {digest8(result.digest)}")
