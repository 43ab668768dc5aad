"""``bourdon remote add|remove|list`` and ``bourdon sync``: replication through git remotes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import open_library
from bourdon.errors import BourdonError, InputError


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("remote", help="git remotes the library replicates to")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    v = verbs.add_parser("add", help="add a remote (any git URL or path; a bare repository)")
    v.add_argument("name", metavar="NAME", help="a short name for the remote, e.g. origin")
    v.add_argument("url", metavar="URL", help="a git URL or path of a bare repository")
    v.add_argument(
        "--visibility",
        choices=("team", "public"),
        default="team",
        help="the highest visibility of rows it receives (default team; private never leaves)",
    )
    v.add_argument(
        "--keep-prompts-home",
        action="store_true",
        help="never send it verbatim prompt text or instruction-file notes (CLAUDE.md, rules)",
    )
    add_json(v)
    v.set_defaults(func=cmd_remote_add)

    v = verbs.add_parser("remove", help="forget a remote (nothing is deleted on its side)")
    v.add_argument("name", metavar="NAME", help="the remote's name, as 'remote list' shows it")
    add_json(v)
    v.set_defaults(func=cmd_remote_remove)

    v = verbs.add_parser("list", help="remotes, what they receive, and how the last sync went")
    add_json(v)
    v.set_defaults(func=cmd_remote_list)

    p = sub.add_parser("sync", help="exchange changes with remotes: fetch, integrate, push")
    p.add_argument("remote", nargs="?", metavar="REMOTE", help="only this one (default: all)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what would be received and sent; change nothing",
    )
    p.add_argument(
        "--watch", action="store_true", help="keep syncing every --interval seconds (for timers)"
    )
    p.add_argument(
        "--interval", type=float, default=300.0, metavar="S", help="seconds between --watch rounds"
    )
    p.add_argument("--rounds", type=int, metavar="N", help="with --watch, stop after N rounds")
    p.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="give up on a fetch or push after S seconds (default 120)",
    )
    add_json(p)
    p.set_defaults(func=cmd_sync)


def cmd_remote_add(args: argparse.Namespace) -> int:
    from bourdon.access.homebound import describe
    from bourdon.replicate.remotes import add_remote, shares_of

    library = open_library(args)
    add_remote(library, args.name, args.url, args.visibility, keep_home=args.keep_prompts_home)
    shares = shares_of(library, args.name)
    if args.json:
        output.print_json(
            {
                "remote": args.name,
                "url": args.url,
                "visibility": args.visibility,
                "keep_prompts_home": args.keep_prompts_home,
                "shares": shares,
            }
        )
    else:
        print(
            f"Added remote {args.name} ({args.url}); it receives {args.visibility} rows on the "
            f"branch bourdon/published. Run 'bourdon sync {args.name}'."
        )
        for line in describe(shares, f"remote {args.name}"):
            print(line)
    return 0


def cmd_remote_remove(args: argparse.Namespace) -> int:
    from bourdon.replicate.remotes import remove_remote

    remove_remote(open_library(args), args.name)
    if args.json:
        output.print_json({"remote": args.name, "removed": True})
    else:
        print(f"Removed remote {args.name}; nothing was deleted on its side.")
    return 0


def cmd_remote_list(args: argparse.Namespace) -> int:
    from bourdon.replicate.state import remote_states

    library = open_library(args)
    states = remote_states(library.root, library.repo)
    if args.json:
        output.print_json({"remotes": [s.to_dict() for s in states]})
        return 0
    if not states:
        print("No remotes. Add one with 'bourdon remote add NAME URL'.")
        return 0
    output.table(
        ["REMOTE", "RECEIVES", "AHEAD", "BEHIND", "LAST SYNC", "LAST ERROR", "URL"],
        [
            [s.name, s.visibility, s.ahead, s.behind, s.last_sync, s.last_error, s.url]
            for s in states
        ],
    )
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    from bourdon.replicate.remotes import remote_names
    from bourdon.replicate.report import SyncReport
    from bourdon.replicate.sync import sync_each, watch

    if args.watch:
        if args.dry_run:
            output.error("--watch and --dry-run do not go together")
            return 2
        failures = 0

        def on_result(name: str, report: SyncReport | None, error: BourdonError | None) -> None:
            nonlocal failures
            if error is not None:
                failures += 1
                output.error(f"sync with {name} failed: {error.message} (recorded for status)")
            elif report is not None:
                _print(report, args.json)

        with open_library(args) as library:
            names = remote_names(library, args.remote)
        watch(
            lambda: open_library(args),
            names,
            interval=max(args.interval, 1.0),
            rounds=args.rounds,
            on_result=on_result,
        )
        return 7 if failures and args.rounds else 0

    library = open_library(args)
    names = remote_names(library, args.remote)
    if not names:
        missing = InputError("no remotes: add one with 'bourdon remote add NAME URL'")
        output.error(missing.message)
        if args.json:  # a sync's document, with nothing synced, and the error's usual shape
            output.print_json({"syncs": [], "ok": False, **missing.to_dict()})
        return missing.exit_code
    reports: list[SyncReport | None] = []
    failed: BourdonError | None = None

    def collect(name: str, report: SyncReport | None, error: BourdonError | None) -> None:
        nonlocal failed
        if error is None:
            reports.append(report)
            return
        failed = error
        output.error(f"sync with {name} failed: {error.message}")
        if args.json:
            reports.append(None)

    sync_each(
        library,
        names,
        on_result=collect,
        dry_run=args.dry_run,
        timeout=args.timeout,
        progress=None if args.json else (lambda text: output.error(text)),
    )
    if args.json:
        output.print_json(
            {"syncs": [r.to_dict() if r else None for r in reports], "ok": failed is None}
        )
    else:
        for report in reports:
            if report is not None:
                _print(report, False)
    return failed.exit_code if failed else 0


def _print(report: Any, as_json: bool) -> None:
    if as_json:  # --watch: one JSON document per line, as each sync completes
        print(json.dumps(report.to_dict(), ensure_ascii=False), flush=True)
        return
    verb = "would " if report.dry_run else ""
    if report.up_to_date and not report.skipped:
        print(f"{report.remote}: up to date")
        return
    for got in report.received:
        print(
            f"{report.remote}: {verb}receive {got.agent_id}: +{got.added} ~{got.changed} "
            f"-{got.removed} rows"
            + (f" (version {output.short(got.version)})" if got.version else "")
        )
        for conflict in got.conflicts:
            print(
                f"{report.remote}: {verb}conflict in {got.agent_id}: {conflict['section']} "
                f"{conflict['row']!r} {', '.join(conflict['fields'])}: {conflict['winner']} won"
            )
    for sent in report.sent:
        kept = f", {sent.withheld} above {report.visibility} kept here" if sent.withheld else ""
        if sent.kept_home:
            kept += f", {sent.kept_home} prompt or instruction rows kept home"
        rows = output.plural(sent.rows, "row")
        print(f"{report.remote}: {verb}send {sent.agent_id}: {rows}{kept}")
    for skipped in report.skipped:
        print(f"{report.remote}: skipped {skipped['file']}: {skipped['reason']}")
