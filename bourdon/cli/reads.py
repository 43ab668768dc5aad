"""``bourdon agents``, ``find``, ``recent`` and ``summary``: the read tools, for people.

They answer from the same functions as the MCP server (``bourdon.query.reads``), in-process.
People reading their own library see team rows by default; ``--private`` adds private rows.
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import levels, load_index, warn


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_access, add_json, add_limit

    p = sub.add_parser("agents", help="the agents in the library, with what each knows")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_agents)

    p = sub.add_parser("find", help="what every agent knows about a name (typos forgiven)")
    p.add_argument("name", metavar="NAME", help="an entity name; typos and aliases are forgiven")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_find)

    p = sub.add_parser("recent", help="recent sessions across agents, newest first")
    p.add_argument("--since", metavar="DATE", help="ISO date (default: the last 14 days)")
    p.add_argument("--agent", metavar="AGENT", help="only this agent's sessions")
    add_limit(p, default=20, most=100, what="sessions per page")
    p.add_argument("--cursor", metavar="C", help="next_cursor of a previous page")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_recent)

    p = sub.add_parser("summary", help="everything the agents know about one project")
    p.add_argument("project", metavar="PROJECT", help="a project name, as the agents call it")
    add_limit(p, default=20, most=100, what="sessions (and notes) to show")
    p.add_argument("--cursor", metavar="C", help="next_cursor of a previous page of sessions")
    add_access(p)
    add_json(p)
    p.set_defaults(func=cmd_summary)

    register_turn(sub)


def register_turn(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser("prepare-turn", help="what bourdon would tell an agent at turn start")
    p.add_argument("prompt", metavar="PROMPT", help="the user's prompt ('-': read stdin)")
    p.add_argument("--cwd", metavar="DIR", help="the agent's working folder (adds a turn brief)")
    p.add_argument(
        "--max-chars",
        type=int,
        default=1200,
        metavar="N",
        help="most characters of the context (default 1200)",
    )
    p.add_argument(
        "--max-lines",
        type=int,
        default=12,
        metavar="N",
        help="most lines of the context (default 12)",
    )
    p.add_argument(
        "--access-level",
        choices=("public", "team", "private"),
        default="team",
        help="the widest visibility to show (default: team)",
    )
    add_json(p)
    p.set_defaults(func=cmd_prepare_turn)

    p = sub.add_parser("turn", help="the turn brief bourdon would give an agent (compile_turn)")
    p.add_argument("prompt", metavar="PROMPT", help="the user's prompt ('-': read stdin)")
    p.add_argument("--agent", default="generic", metavar="A", help="the agent it is for")
    p.add_argument("--cwd", metavar="DIR", help="the agent's working folder (ranks its project)")
    p.add_argument(
        "--format",
        default="markdown",
        metavar="F",
        help="markdown (default), json, xml, compact, brief or yaml",
    )
    p.add_argument("--max-items", type=int, default=6, metavar="N", help="clamped to 1..20")
    p.add_argument("--max-chars", type=int, default=1800, metavar="N", help="clamped to 320..8000")
    p.add_argument(
        "--access-level",
        choices=("public", "team"),
        default="team",
        help="the widest visibility to show (default: team; a brief never holds private rows)",
    )
    add_json(p)
    p.set_defaults(func=cmd_turn)


def cmd_turn(args: argparse.Namespace) -> int:
    import sys

    from bourdon.query.turnbrief import compile_turn

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    answer = compile_turn(
        load_index(args),
        prompt,
        args.agent,
        args.cwd,
        args.access_level,
        args.max_items,
        args.max_chars,
        args.format,
    )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    print(answer["brief"])
    return 0


def cmd_prepare_turn(args: argparse.Namespace) -> int:
    import sys

    from bourdon.query import context

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    index = load_index(args)
    private = args.access_level == "private"
    answer = context.prepare_recognition_context(
        index,
        prompt,
        args.access_level,
        private,
        max_chars=args.max_chars,
        max_lines=args.max_lines,
    )
    if args.cwd:
        answer["turn_brief"] = context.compile_codex_turn(
            index, prompt, args.cwd, args.access_level
        )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    if not answer["matched_entities"]:
        print("Nothing in this prompt is known to your agents.")
    else:
        print(answer["prompt_context"])
        print(
            f"\n({len(answer['matched_entities'])} recognised in "
            f"{answer['recognition_latency_us']:.0f} µs)"
        )
    for drift in answer.get("drifting_surfaces", []):
        output.error(f"warning: {drift['agent']} has stopped yielding memory: {drift['reason']}")
    return 0




def cmd_agents(args: argparse.Namespace) -> int:
    from bourdon.access.visibility import resolve
    from bourdon.query import reads

    index = load_index(args)
    details = reads.agent_details(index, resolve(*levels(args)))
    if args.json:
        output.print_json({"agents": details, "problems": sorted(index.problems.values())})
        return 0
    output.table(
        ["AGENT", "TYPE", "ENTITIES", "SESSIONS", "WORKSTREAMS", "NOTES", "LAST SESSION"],
        [
            [
                d["id"],
                d["type"],
                d["entities"],
                d["sessions"],
                d["workstreams"],
                d["notes"],
                d["freshest_session"],
            ]
            for d in details
        ],
    )
    for problem in sorted(index.problems.values()):
        output.error(f"warning: {problem}")
    return 0


def cmd_find(args: argparse.Namespace) -> int:
    from bourdon.query import reads

    answer = reads.find_entity(load_index(args), args.name, *levels(args))
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    if not answer["matches"]:
        print(f"No agent knows {args.name!r}.")
        return 0
    for match in answer["matches"]:
        kinds = "" if match["match"] == "exact" else f"  ({match['match']}, score {match['score']})"
        types = f" [{', '.join(match['types'])}]" if match["types"] else ""
        print(f"{match['name']}{types}{kinds}")
        output.table(
            ["AGENT", "SUMMARY"],
            [[agent, match["summaries"].get(agent, "")] for agent in match["agents"]],
            indent="  ",
            header=False,
        )
    return 0


def cmd_recent(args: argparse.Namespace) -> int:
    from bourdon.query import reads

    answer = reads.list_recent_work(
        load_index(args), args.since, args.agent, *levels(args), args.limit, args.cursor
    )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    if not answer["sessions"]:
        print(f"No sessions since {answer['meta']['since_applied']}.")
        return 0
    output.table(
        ["DATE", "AGENT", "PROJECT", "WHAT"],
        [
            [
                s["date"],
                s["agent"],
                ", ".join(s["project_focus"]),
                "; ".join(s.get("key_actions", [])),
            ]
            for s in answer["sessions"]
        ],
    )
    if answer["has_more"]:
        print(f"\nMore: bourdon recent --cursor {answer['next_cursor']}")
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from bourdon.query import reads

    answer = reads.get_cross_agent_summary(
        load_index(args), args.project, *levels(args), args.limit, args.cursor
    )
    if args.json:
        output.print_json(answer)
        return 0
    warn(answer)
    print(f"{answer['project']}: known to {', '.join(answer['agents']) or 'no agent'}")
    output.table(
        ["AGENT", "SUMMARY"],
        [[agent, text] for e in answer["entities"] for agent, text in e["summaries"].items()],
        indent="  ",
        header=False,
    )
    if answer["recent_sessions"]:
        print("\nSessions")
        output.table(
            ["DATE", "AGENT", "WHAT"],
            [
                [s["date"], s["agent"], "; ".join(s["key_actions"])]
                for s in answer["recent_sessions"]
            ],
        )
    if answer["has_more"]:
        print(f"More sessions: bourdon summary {args.project!r} --cursor {answer['next_cursor']}")
    if answer["workstreams"]:
        print("\nWorkstreams")
        output.table(
            ["NAME", "STATUS", "AGENTS"],
            [[w["name"], w["status"], ", ".join(w["agents"])] for w in answer["workstreams"]],
        )
    if answer["notes"]:
        print("\nNotes")
        output.table(
            ["DATE", "AGENT", "NOTE"], [[n["date"], n["agent"], n["text"]] for n in answer["notes"]]
        )
    return 0
