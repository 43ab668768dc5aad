"""``bourdon demo``: a guided tour of a library, on a copy of the bundled sample library."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bourdon.cli import output
from bourdon.digest import digest8
from bourdon.errors import InputError
from bourdon.formats.resources import sample_library_path
from bourdon.model import ENTITIES, Visibility, fold, row_visibility

SHARED_ENTITY = "bourdon"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="a guided tour on a temporary copy of the sample library")
    p.add_argument(
        "--keep",
        metavar="DIR",
        help="build the demo library in DIR and keep it (DIR must be new or empty)",
    )
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.keep:
        root = Path(args.keep).expanduser().absolute()
        refuse_used(root)
        tour(root)
        return 0
    with tempfile.TemporaryDirectory(prefix="bourdon-demo-") as tmp:
        tour(Path(tmp) / "library")
    return 0


def refuse_used(root: Path) -> None:
    """The tour commits the sample and rolls an agent back: never in a folder that holds
    anything already (above all a library, whose rows it would write over)."""
    if not root.exists():
        return
    if not root.is_dir():
        raise InputError(f"demo --keep {root}: that is a file, not a folder; name a new folder")
    if (root / ".git").exists() or (root / "agents").is_dir():
        raise InputError(
            f"demo --keep {root}: that is a library already; the tour would write the sample "
            "over its rows and changed nothing: name a new folder"
        )
    if any(root.iterdir()):
        raise InputError(
            f"demo --keep {root}: the folder is not empty and the tour changed nothing; "
            "name a new or empty folder"
        )


def step(title: str) -> None:
    print(f"\n== {title}")


def tour(root: Path) -> None:
    from bourdon.model import SUFFIX
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

    sample = sample_library_path() / "agents"
    step(f"1. A library is a git repository of manifests: {root}")
    library = Library.init(root)
    for path in sorted(sample.glob(f"*{SUFFIX}")):
        library.import_manifest(
            path.read_bytes(), what=path.name, provenance=Provenance(caller="demo")
        )
    rows = []
    for agent_id in library.agent_ids():
        m = library.read(agent_id)
        c = m.counts()
        rows.append(
            [
                agent_id,
                m.agent_type,
                c["known_entities"],
                c["recent_sessions"],
                c["known_workstreams"],
                c["notes"],
            ]
        )
    output.table(["AGENT", "TYPE", "ENTITIES", "SESSIONS", "WORKSTREAMS", "NOTES"], rows)

    step(f"2. One entity, known to several agents: {SHARED_ENTITY!r} (team view)")
    known = []
    for agent_id in library.agent_ids():
        m = library.read(agent_id)
        for row in m.rows(ENTITIES):
            if fold(str(row["name"])) == SHARED_ENTITY and _visible(row, m.policy):
                known.append([agent_id, row.get("summary", "")])
    output.table(["AGENT", "SUMMARY"], known, indent="  ", header=False)

    agent = "claude-desktop-chat"
    step(f"3. A commit: {agent} learns something new")
    before = library.history(agent, limit=1)[0]
    result = library.commit(
        agent,
        {
            ENTITIES: [
                {
                    "name": "Tour of bourdon",
                    "type": "decision",
                    "summary": "Ran the demo and saw every write land as a git commit.",
                    "tags": ["demo"],
                    "visibility": "team",
                }
            ]
        },
        provenance=Provenance(caller="demo", session="demo-session-1"),
    )
    print(
        f"  +{result.stats.total_added} entity, version {output.short(result.version)}, "
        f"digest {digest8(result.digest)}"
    )

    step(f"4. History of {agent}, newest first")
    output.table(
        ["VERSION", "OP", "CALLER", "DIGEST", "SUBJECT"],
        [
            [output.short(v.version_id), v.op, v.caller, v.digest8, v.subject]
            for v in library.history(agent)
        ],
    )

    step(f"5. Rollback to {output.short(before.version_id)}: a new commit, itself undoable")
    undone = library.rollback(
        agent,
        before.version_id,
        expected_digest=result.digest,
        provenance=Provenance(caller="demo"),
    )
    same = library.read_bytes(agent) == library.read_bytes(agent, before.version_id)
    print(f"  restored the exact bytes of {output.short(before.version_id)}: {same}")
    print(
        f"  rollback commit {output.short(undone.version)} removed "
        f"{output.plural(undone.stats.total_removed, 'row')}"
    )
    found = library.explain(agent, digest8(result.digest))
    print(
        f"  explain {digest8(result.digest)}: written by {found.version.caller} "
        f"in session {found.version.session} ({found.version.op})"
    )
    ok, _ = library.fsck()
    print(f"\nThe library is plain files in git; 'git fsck' says: {'clean' if ok else 'PROBLEM'}.")
    library.close()

    step("6. The MCP server: `bourdon serve` answers any MCP client (here over stdio)")
    ask_the_server(root)
    print("\nWire the agents here to bourdon: bourdon setup (--dry-run shows each change)")
    print("Every command: bourdon --help")


def ask_the_server(root: Path) -> None:
    """Start `bourdon serve` as a child process and ask it what it knows, like an agent does."""
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve", "--no-watch"],
        # The child's members and audit log go to a throwaway home, never the user's own.
        env={
            "HOME": str(root.parent),
            "BOURDON_HOME": tempfile.mkdtemp(prefix="bourdon-demo-home-"),
        },
    )

    async def talk() -> None:
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            print(f"  tools: {', '.join(tools)}")
            found = await client.call_tool(
                "find_entity", {"name": "Priya Ramen", "access_level": "team"}
            )
            match = (found.structured_content or {}).get("matches", [{}])[0]
            print(
                f"  find_entity('Priya Ramen') -> {match.get('name')!r} "
                f"({match.get('match')}, score {match.get('score')}), "
                f"known to {', '.join(match.get('agents', []))}"
            )
            recent = await client.call_tool(
                "list_recent_work",
                {"since": "2026-11-20", "access_level": "team", "limit": 3, "summary": True},
            )
            for s in (recent.structured_content or {}).get("sessions", []):
                print(
                    f"  list_recent_work -> {s['date']}  {s['agent']:<20} "
                    f"{', '.join(s['project_focus'])}"
                )

    anyio.run(talk)


def _visible(row: Mapping[str, Any], policy: Mapping[str, Any]) -> bool:
    return row_visibility(row, policy) <= Visibility.TEAM
