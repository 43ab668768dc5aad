"""``bourdon forget`` (an entity out of the live manifests) and ``bourdon purge`` (a text or an
entity out of the whole history)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import home_path, open_library


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("forget", help="remove an entity and its mentions from live memory")
    p.add_argument("name", metavar="NAME", help="the entity's name or one of its aliases")
    p.add_argument("--agent", metavar="A", help="only this agent's manifest")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--dry-run", action="store_true", help="show what would go; write nothing")
    add_json(p)
    p.set_defaults(func=cmd_forget)

    p = sub.add_parser("purge", help="rewrite the whole history without a text or an entity")
    what = p.add_mutually_exclusive_group()  # one is needed: checked by the command
    what.add_argument("--entity", metavar="NAME", help="every version loses this entity")
    what.add_argument("--text", metavar="STRING", help="every file and message loses STRING")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--dry-run", action="store_true", help="show what would be rewritten")
    add_json(p)
    p.set_defaults(func=cmd_purge)


def _confirmed(args: argparse.Namespace, question: str) -> bool | None:
    """``True`` to go on; ``False`` when the person said no; ``None``: no TTY and no --yes."""
    if args.yes or args.dry_run:
        return True
    if not sys.stdin.isatty():
        return None
    print(f"{question} [y/N] ", end="", flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_forget(args: argparse.Namespace) -> int:
    from bourdon.store import forgetting

    library = open_library(args)
    if args.dry_run:
        agents = [args.agent] if args.agent else library.agent_ids()
        plan = {}
        for each in agents:
            data = dict(library.read(each).data)
            counts = forgetting.forget(data, forgetting.names_of(data, args.name))[1]
            if sum(counts.values()):
                plan[each] = counts
        if args.json:
            output.print_json({"dry_run": True, "agents": plan})
        else:
            for agent, counts in plan.items():
                print(f"would forget in {agent}: {_counts(counts)}")
            if not plan:
                print(f"No entity or mention named {args.name!r}.")
        return 0
    answer = _confirmed(args, f"Forget {args.name!r} in the live manifests?")
    if answer is None:
        output.error("forget needs confirmation: run it in a terminal, or pass --yes")
        return 2
    if not answer:
        print("Nothing forgotten.")
        return 1
    done = library.forget(args.name, agent_id=args.agent)
    if args.json:
        output.print_json(
            {
                "forgotten": [
                    {"agent_id": d.agent_id, "removed": d.counts, "version": d.result.version}
                    for d in done
                ]
            }
        )
        return 0
    for d in done:
        print(f"forgot in {d.agent_id}: {_counts(d.counts)} ({output.short(d.result.version)})")
    print("History still holds it; 'bourdon purge --entity NAME' rewrites history too.")
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    from bourdon.access.audit import scrub_file
    from bourdon.replicate.state import mark_purged
    from bourdon.store.purge import REPLACEMENT, purge

    if args.text is None and args.entity is None:
        output.error("purge needs --entity NAME or --text STRING")
        return 2
    library = open_library(args)
    what = f"the text {args.text!r}" if args.text is not None else f"the entity {args.entity!r}"
    answer = _confirmed(args, f"Rewrite the library's whole history without {what}?")
    if answer is None:
        output.error(
            "purge rewrites history and needs confirmation: run it in a terminal, or pass --yes"
        )
        return 2
    if not answer:
        print("Nothing purged.")
        return 1
    report = purge(
        library,
        text=args.text,
        entity=args.entity,
        dry_run=args.dry_run,
        remotes=lambda: sorted(library.repo.remotes()),
        mark_remote=lambda name, commits: mark_purged(library.root, name, commits),
    )
    audit_lines = 0
    if not args.dry_run:
        if args.text is not None:
            text = args.text
            audit_lines = scrub_file(home_path(), lambda line: line.replace(text, REPLACEMENT))
        else:
            pattern = re.compile(re.escape(args.entity), re.IGNORECASE)
            audit_lines = scrub_file(home_path(), lambda line: pattern.sub(REPLACEMENT, line))
    library.close()
    if args.json:
        output.print_json({**report.to_dict(), "audit_lines": audit_lines})
        return 0 if report.fsck_clean is not False else 1
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(
        f"{verb} {report.commits} of {output.plural(report.total_commits, 'commit')}, "
        f"{output.plural(len(report.files), 'file')}, agents: {', '.join(report.agents) or 'none'}"
    )
    for path in report.files[:20]:
        print(f"  {path}")
    if args.dry_run:
        return 0
    fsck = "clean" if report.fsck_clean else report.fsck_said
    print(f"scrubbed {output.plural(audit_lines, 'audit line')}; git fsck: {fsck}")
    for name in report.remotes:
        print(f"remote {name}: its published branch is force-updated on the next 'bourdon sync'")
    print(
        "Warning: clones and other machines that synced before keep their copy; purge there "
        "too, or they may send it back."
    )
    return 0 if report.fsck_clean else 1


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "nothing"
