"""``bourdon status`` and ``bourdon doctor``: the library's health, for people and for scripts.

Both build the same report (``bourdon.status.health``) the MCP tool ``memory_status`` gives,
read from the library at HEAD (the CLI has no index loaded). ``doctor`` adds the slow checks
(``git fsck``, every manifest validated at HEAD and on disk, the git identity hand commits use,
and with ``--host`` the bind ``bourdon serve`` would make) and prints each problem with its fix.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from bourdon.cli import output
from bourdon.cli.shared import (
    check_peers,
    home_path,
    library_path,
    reader_context,
    report_recovery,
)
from bourdon.errors import LibraryError
from bourdon.serve.launch import is_loopback

PROBLEMS_EXIT: Final = LibraryError.exit_code  # doctor, when it found an error-severity problem


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser(
        "status", help="the library's health: agents, readers, staging, peers, remotes, members"
    )
    _peer_options(p)
    add_json(p)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("doctor", help="what is wrong with the library, and how to fix each")
    p.add_argument(
        "--host",
        metavar="HOST",
        help="also check serving HTTP on HOST ('bourdon serve --host'): off loopback it needs "
        "an active member",
    )
    _peer_options(p)
    add_json(p)
    p.set_defaults(func=cmd_doctor)


def _peer_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-peers", action="store_true", help="do not ask the peers (shown as not checked)"
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=2.0,
        metavar="S",
        help="give up on a peer after S seconds (default 2)",
    )


def cmd_status(args: argparse.Namespace) -> int:
    report = _report(args, deep=False)
    if args.json:
        output.print_json(report)
        return 0
    _print_status(report)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from bourdon.status.doctor import has_errors

    report = _report(args, deep=True)
    problems = report["problems"]
    if args.json:
        output.print_json(
            {
                "library": report["library"],
                "ok": not has_errors(problems),
                "problems": problems,
                "checks": report.get("checks"),
            }
        )
    else:
        _print_problems(problems)
    return PROBLEMS_EXIT if has_errors(problems) else 0


def _report(args: argparse.Namespace, *, deep: bool) -> dict[str, Any]:
    from bourdon.ingest import selection
    from bourdon.status import health
    from bourdon.status.readers import is_library
    from bourdon.status.registrations import registration_problems
    from bourdon.store.library import Library

    root = library_path(args).absolute()
    library = None
    recovered: list[str] = []
    if is_library(root):
        library = Library.open(root)  # repairs an interrupted write, and says so
        recovered = list(library.recovered)
        report_recovery(library)
    elif not deep:  # doctor reports a missing library as a problem; status cannot report
        Library.open(root)  # refuses, saying what to do (init creates it, or adopts a reference)
        raise LibraryError(
            f"{root} is not a bourdon library; create one with 'bourdon init {root}'"
        )
    try:
        ctx = reader_context()
        facts = health.collect(
            library,
            root,
            home_path(),
            readers=selection.available_readers(),
            ctx=ctx,
            peer_outcomes=None if args.no_peers else check_peers(max(0.1, args.deadline)),
            recovered=recovered,
        )
        if deep:
            facts.checks = health.deep_checks(library, ctx.env) if library is not None else {}
            facts.checks["registrations"] = registration_problems(home_path())
            if args.host:
                facts.checks["bind"] = {"host": args.host, "loopback": is_loopback(args.host)}
        return health.compose(facts)
    finally:
        if library is not None:
            library.close()


# -- for people ---------------------------------------------------------------------------


def _print_status(report: dict[str, Any]) -> None:
    head = report["head"]
    print(f"Library  {report['library']} ({report['branch']} at {output.short(head)})")
    print("Index    none loaded: this command reads the manifests at HEAD")
    _print_objects(report.get("objects"))
    _print_members(report["members"])
    print()
    _print_agents(report)
    print()
    _print_readers(report["readers"])
    print()
    _print_staging(report["staging"])
    print()
    _print_peers(report["peers"])
    print()
    _print_remotes(report["remotes"])
    problems = report["problems"]
    if problems:
        errors = sum(1 for p in problems if p["severity"] == "error")
        print(
            f"\n{output.plural(len(problems), 'problem')}, {output.plural(errors, 'error')}; "
            "'bourdon doctor' gives the fix of each:"
        )
        for p in problems:
            print(f"  {p['severity']:<8} {p['code']}: {p['message']}")
    else:
        print("\nNo problem found ('bourdon doctor' also runs the slow checks).")


def _print_objects(store: dict[str, Any] | None) -> None:
    if not store or "error" in store:
        return
    last = store["last_packed"] or "never"
    limit = store["loose_limit"]
    when = f"packs past ~{limit:,} loose" if limit else "packing disabled (gc.auto=0)"
    running = "; packing now" if store["packing"] else ""
    print(
        f"Objects  ~{store['loose_estimate']:,} loose, {output.plural(store['packs'], 'pack')}, "
        f"last packed {last} ({when}){running}"
    )


def _print_agents(report: dict[str, Any]) -> None:
    agents = report["agents"]
    totals = agents["totals"]
    levels = ", ".join(f"{n} {level}" for level, n in totals["by_visibility"].items())
    versions = ", ".join(f"{v} x{n}" for v, n in report["schema_versions"].items()) or "-"
    print(
        f"Agents   {agents['count']}, {output.plural(totals['total'], 'row')} ({levels}); "
        f"spec_version {versions}"
    )
    if agents["agents"]:
        output.table(
            ["AGENT", "ENTITIES", "SESSIONS", "WORKSTREAMS", "NOTES", "PRIVATE", "DIGEST"],
            [[agent_id, *_counts(a)] for agent_id, a in agents["agents"].items()],
        )


def _counts(agent: dict[str, Any]) -> list[Any]:
    if not agent["valid"]:
        return ["INVALID", None, None, None, None, agent["problem"]]
    rows = agent["rows"]
    return [
        rows["known_entities"],
        rows["recent_sessions"],
        rows["known_workstreams"],
        rows["notes"],
        agent["by_visibility"].get("private"),
        agent["digest8"],
    ]


def _print_readers(readers: list[dict[str, Any]]) -> None:
    here = [r for r in readers if r["present"] or r["last_export"]]
    stores = sum(1 for r in readers if r["present"])
    print(f"Readers  {len(readers)} known, {stores} with a store here")
    if here:
        output.table(
            ["READER", "ROWS", "LAST EXPORT", "OUTCOME", "STATE"],
            [[r["reader"], r["rows"], r["last_export"], r["outcome"], _state(r)] for r in here],
        )


def _state(reader: dict[str, Any]) -> str:
    if reader["drifting"]:
        return "DRIFTING"
    if (reader["erosion"] or {}).get("refused"):
        return "REFUSED"
    if reader["yielding"] is None:
        return "never exported"
    return "yielding" if reader["yielding"] else "no rows"


def _print_staging(staging: dict[str, Any]) -> None:
    if staging.get("error"):
        print(f"Staging  cannot be listed: {staging['error']}")
        return
    stale = (
        f", {staging['stale']} older than {output.plural(staging['stale_after_days'], 'day')}"
        if staging["stale"]
        else ""
    )
    print(f"Staging  {output.plural(staging['waiting'], 'write')} waiting{stale}")
    if staging["writes"]:
        output.table(
            ["AGENT", "FROM", "ROWS", "STAGED AT", "AGE (DAYS)"],
            [
                [
                    w["agent_id"],
                    w["caller"],
                    w["rows"],
                    w["staged_at"],
                    round(w["age_seconds"] / 86_400, 1) if w["age_seconds"] is not None else None,
                ]
                for w in staging["writes"]
            ],
        )


def _print_peers(peers: dict[str, Any]) -> None:
    if peers.get("error"):
        print(f"Peers    cannot be read: {peers['error']}")
        return
    if not peers["configured"]:
        print("Peers    none")
        return
    print(
        f"Peers    {peers['configured']}: {peers['reachable']} reachable, "
        f"{peers['unreachable']} unreachable, {peers['not_checked']} not checked"
    )
    output.table(
        ["PEER", "URL", "REACHABLE", "LATENCY MS", "PROBLEM"],
        [
            [
                p["name"],
                p["url"],
                "not checked" if not p["checked"] else "yes" if p["reachable"] else "NO",
                p["latency_ms"],
                p["problem"],
            ]
            for p in peers["peers"]
        ],
    )


def _print_remotes(remotes: dict[str, Any]) -> None:
    if remotes.get("error"):
        print(f"Remotes  cannot be read: {remotes['error']}")
        return
    if not remotes["configured"]:
        print("Remotes  none")
        return
    print(f"Remotes  {remotes['configured']}, {remotes['failing']} failing")
    output.table(
        ["REMOTE", "SENDS", "AHEAD", "BEHIND", "LAST SYNC", "LAST ERROR"],
        [
            [
                r["name"],
                r["visibility"],
                r["ahead"],
                r["behind"],
                r["last_sync"],
                r["last_error"],
            ]
            for r in remotes["remotes"]
        ],
    )


def _print_members(members: dict[str, Any] | None) -> None:
    if members is None:
        print("Members  no member registry (nobody enrolled: bourdon member add NAME)")
    elif members.get("error"):
        print(f"Members  cannot be read: {members['error']}")
    else:
        print(
            f"Members  {members['active']} active ({members['trusted']} trusted, "
            f"{members['quarantined']} quarantined, {output.plural(members['peers'], 'peer')}), "
            f"{members['revoked']} revoked"
        )


def _print_problems(problems: list[dict[str, str]]) -> None:
    if not problems:
        print("No problem found.")
        return
    for p in problems:
        print(f"{p['severity'].upper():<7}  {p['code']}: {p['message']}")
        print(f"         fix: {p['fix']}")
    errors = sum(1 for p in problems if p["severity"] == "error")
    print(f"{output.plural(errors, 'error')}, {output.plural(len(problems) - errors, 'warning')}")
