"""``bourdon readers``, ``export`` and ``export-all``: the agent readers and their exports.

The work is in ``bourdon.ingest`` (which readers, the pipeline, export-all) and
``bourdon.status.readers`` (the readers report); this module parses, calls and prints.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import home_path, library_path, open_library, reader_context
from bourdon.digest import digest8
from bourdon.errors import ConflictError, NotFoundError
from bourdon.ingest import selection
from bourdon.ingest.outcome import cap_note

if TYPE_CHECKING:
    from bourdon.ingest.outcome import ExportResult


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser(
        "readers", help="the agent readers: store found, last export, health, hook failures"
    )
    add_json(p)
    p.set_defaults(func=cmd_readers)

    p = sub.add_parser("export", help="regenerate an agent's rows from its native store")
    p.add_argument("agent", metavar="AGENT", help="the reader (agent id), see 'bourdon readers'")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would change; write nothing at all"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="export even if the store looks unchanged, and past the erosion guard",
    )
    p.add_argument("--store", metavar="PATH", help="read the store at PATH instead of the default")
    add_json(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("export-all", help="export every reader whose store is on this machine")
    p.add_argument("--force", action="store_true", help="as for 'export': skip the guards")
    add_json(p)
    p.set_defaults(func=cmd_export_all)


# -- the readers ----------------------------------------------------------------------------


def cmd_readers(args: argparse.Namespace) -> int:
    from bourdon.status.readers import failure_logs, is_library, reader_report

    # Looked up on the module at each call, so tests can register readers of their own.
    readers, broken = selection.available_readers()
    root = library_path(args)
    ctx = reader_context()
    report = reader_report(readers, broken, ctx, root, failure_logs(root, home_path()))
    entries, plugins, other = report["readers"], report["broken"], report["other_hook_failures"]
    if args.json:
        output.print_json(
            {
                "library": str(root) if is_library(root) else None,
                "readers": entries,
                "broken": plugins,
                "other_hook_failures": other,
            }
        )
        return 0
    if not entries:
        print("No reader is registered." if not plugins else "No reader could be loaded.")
    else:
        output.table(
            ["READER", "STORE", "ROWS", "LAST EXPORT", "OUTCOME", "HEALTH"],
            [
                [
                    e["reader"],
                    e["store"] if e["present"] else _nowhere(e),
                    e["rows"],
                    e["last_export"],
                    e["outcome"],
                    "ok" if e["health"]["ok"] else "PROBLEM" if e["present"] else "-",
                ]
                for e in entries
            ],
        )
    absent = [e["reader"] for e in entries if e["present"] is False]
    if absent:
        print(
            f"  no store on this machine for {', '.join(absent)} ('bourdon readers --json' says "
            "where each was looked for, and which variable points at another place)"
        )
    for e in entries:
        if not e["registered"]:
            print(f"  {e['reader']}: {e['health']['message']}; its last export is shown")
        if e["present"] and not e["health"]["ok"]:
            fix = f"; fix: {e['health']['fix']}" if e["health"]["fix"] else ""
            print(f"  {e['reader']}: {e['health']['message']}{fix}")
        if e["drifting"]:
            drift = e["drift"]
            print(f"  {e['reader']}: DRIFTING since {drift['checked_at']}: {drift['reason']}")
        if e["outcome"] == "refused":
            print(f"  {e['reader']}: last export refused: {e['reason']}")
        note = cap_note(e.get("capped"))
        if note:
            print(f"  {e['reader']}: {note}")
        fail = e["last_hook_failure"]
        if fail and not e["hook_failure_resolved"]:
            print(f"  {e['reader']}: hook failed at {fail.get('when')}: {fail.get('error')}")
    for fail in other:
        print(f"  hook '{fail.get('what')}' failed at {fail.get('when')}: {fail.get('error')}")
    if plugins:
        print("Reader plugins that failed to load:")
        for b in plugins:
            print(f"  {b['name']} ({b['target']}): {b['error']}")
    return 0


def _nowhere(entry: dict[str, Any]) -> str:
    return "(none here)" if entry["registered"] else "(not registered)"


# -- export ---------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    from bourdon.ingest.outcome import MISSING, REFUSED
    from bourdon.ingest.pipeline import export_reader

    reader = selection.pick_reader(args.agent)
    ctx = reader_context(args.store)
    library = open_library(args)
    result = export_reader(library, reader, ctx, dry_run=args.dry_run, force=args.force)
    if result.outcome == MISSING:
        fix = reader.health(ctx).fix
        raise NotFoundError(f"{result.reason}{'; ' + fix if fix else ''}")
    if args.json:
        output.print_json(result.to_dict())
    else:
        _print_result(result)
    if result.outcome == REFUSED:
        output.error(f"export of {result.reader} refused: {result.reason}")
        return ConflictError.exit_code
    return 0


def _print_result(result: ExportResult) -> None:
    name = result.reader
    secrets = sum(result.redacted.values())
    redacted = f", {secrets} secret{'s' if secrets != 1 else ''} redacted" if secrets else ""
    if result.outcome == "unchanged":
        print(f"{name}: the store has not changed since the last export; nothing to do")
    elif result.outcome == "dry_run":
        changes = result.changes
        print(
            f"Dry run: exporting {name} would add {result.added}, change {result.updated} and "
            f"remove {result.removed} rows ({result.rows} rows from {result.store}{redacted})"
        )
        if changes is not None:
            for mark, part in (
                ("+", changes.added),
                ("~", changes.changed),
                ("-", changes.removed),
            ):
                for section, labels in part.items():
                    for label in labels:
                        print(f"  {mark} {section}: {label}")
        if result.reason:
            print(f"  the erosion guard would refuse it: {result.reason}")
        print("Nothing was written.")
    elif result.outcome == "refused":
        print(f"{name}: not exported ({result.rows} rows read from {result.store}{redacted})")
    elif result.outcome == "no_op":
        print(f"{name}: nothing new ({result.rows} rows from {result.store}{redacted})")
    else:
        print(
            f"Exported {name}: +{result.added} added, ~{result.updated} updated, "
            f"-{result.removed} removed ({result.rows} rows from {result.store}{redacted})"
        )
        print(f"  version {output.short(result.version)}  digest {digest8(result.digest or '')}")
        if result.reason:
            print(f"  {result.reason}")
    note = cap_note(result.capped)
    if note and result.outcome != "unchanged":
        print(f"  {note}")
    if result.drifting:
        print(f"  warning: {name} is drifting: {result.drifting['reason']}")


def cmd_export_all(args: argparse.Namespace) -> int:
    from bourdon.ingest.exportall import FAILED, export_all, failed
    from bourdon.ingest.outcome import GOOD_OUTCOMES, MISSING

    readers, broken = selection.available_readers()
    ctx = reader_context()
    library = open_library(args)
    progress = _Progress(sys.stderr)

    def started(i: int, n: int, name: str) -> None:
        progress.start(f"[{i}/{n}] {name}: exporting...")

    def finished(
        i: int, n: int, name: str, result: ExportResult | None, problem: str | None
    ) -> None:
        note = _one_line(result) if result is not None else f"FAILED: {problem}"
        progress.done(f"[{i}/{n}] {name}: {note}")

    results = export_all(
        library, readers, ctx, force=args.force, started=started, finished=finished
    )
    bad = failed(results)
    plugins = [{"name": b.name, "target": b.target, "error": b.error} for b in broken]
    if args.json:
        output.print_json({"readers": results, "broken": plugins, "ok": not bad})
    else:
        output.table(
            ["READER", "OUTCOME", "ROWS", "+", "~", "-", "REDACTED", "NOTE"],
            [
                [
                    r["reader"],
                    "no store" if r["outcome"] == MISSING else r["outcome"],
                    *(
                        [None] * 5
                        if r["outcome"] in (MISSING, FAILED)
                        else [
                            r.get("rows"),
                            r.get("added"),
                            r.get("updated"),
                            r.get("removed"),
                            sum((r.get("redacted") or {}).values()),
                        ]
                    ),
                    _note(r),
                ]
                for r in results
            ],
        )
        for r in results:
            note = cap_note(r.get("capped"))
            if note and r["outcome"] not in (MISSING, "unchanged"):
                print(f"{r['reader']}: {note}")
        exported = sum(1 for r in results if r["outcome"] in GOOD_OUTCOMES)
        absent = sum(1 for r in results if r["outcome"] == MISSING)
        parts = [f"{exported} exported or up to date", f"{absent} without a store here"]
        parts.append(f"{len(bad)} failed or refused")
        if plugins:
            parts.append(f"{len(plugins)} plugin{'s' if len(plugins) != 1 else ''} failed to load")
        print(", ".join(parts))
    return 1 if bad else 0


def _note(entry: dict[str, Any]) -> str:
    """The NOTE cell of export-all's table: why, or how many sessions the cap left out."""
    if entry["outcome"] in ("missing", "unchanged"):
        return ""
    capped = entry.get("capped")
    n = capped["sessions_dropped"] if isinstance(capped, dict) else 0
    dropped = f"{n:,} older session{'s' if n != 1 else ''} left out by the cap" if n else ""
    return "; ".join(x for x in (entry.get("reason") or "", dropped) if x)


def _one_line(result: ExportResult) -> str:
    seconds = f"{result.seconds:.1f} s"
    if result.outcome == "missing":
        return "no store on this machine, skipped"
    if result.outcome == "unchanged":
        return f"unchanged ({result.rows} rows)"
    if result.outcome == "refused":
        return f"REFUSED: {result.reason}"
    return (
        f"{result.outcome.replace('_', '-')}: {result.rows} rows "
        f"(+{result.added} ~{result.updated} -{result.removed}) in {seconds}"
    )


class _Progress:
    """One line per reader on stderr; on a terminal the running line is rewritten in place."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def start(self, text: str) -> None:
        if self.tty:
            self.stream.write(f"\r\033[K{text}")
            self.stream.flush()

    def done(self, text: str) -> None:
        self.stream.write(f"\r\033[K{text}\n" if self.tty else f"{text}\n")
        self.stream.flush()
