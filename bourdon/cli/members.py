"""``bourdon member ...`` and ``bourdon audit``: who may use the server, and what they did."""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.cli import output
from bourdon.cli.shared import home_path as home


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json, add_limit

    p = sub.add_parser("member", help="enrol, list, rotate and revoke the members of the server")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    v = verbs.add_parser("add", help="enrol a member and print its token (shown once)")
    v.add_argument("id", metavar="ID", help="the member's id, as 'bourdon member list' shows it")
    v.add_argument(
        "--tier",
        choices=("quarantined", "trusted"),
        default="quarantined",
        help="trusted members write live; quarantined ones (default) are staged",
    )
    v.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="NS",
        help="a namespace (agent id) it may read; repeatable",
    )
    v.add_argument(
        "--peer",
        action="store_true",
        help="another machine's bourdon server: its calls are answered locally only",
    )
    v.add_argument(
        "--keep-prompts-home",
        action="store_true",
        help="never answer it with verbatim prompt text or instruction-file notes",
    )
    add_json(v)
    v.set_defaults(func=cmd_add)

    v = verbs.add_parser("list", help="members, their tier, grants and state (no tokens)")
    add_json(v)
    v.set_defaults(func=cmd_list)

    for name, func, text in (
        ("rotate", cmd_rotate, "give a member a new token; the old one stops working"),
        ("revoke", cmd_revoke, "stop a member's token working, on the next request"),
    ):
        v = verbs.add_parser(name, help=text)
        v.add_argument("id", metavar="ID", help="the member's id, as 'member list' shows it")
        add_json(v)
        v.set_defaults(func=func)

    for name, func, text in (
        ("grant", cmd_grant, "let a member read a namespace"),
        ("ungrant", cmd_ungrant, "take a namespace back"),
    ):
        v = verbs.add_parser(name, help=text)
        v.add_argument("id", metavar="ID", help="the member's id, as 'member list' shows it")
        v.add_argument("namespace", metavar="NS", help="a namespace: an agent id of the library")
        add_json(v)
        v.set_defaults(func=func)

    v = verbs.add_parser(
        "import",
        help="convert the reference Bourdon's federation.yaml to bourdon's shape (tokens kept)",
    )
    add_json(v)
    v.set_defaults(func=cmd_import)

    p = sub.add_parser("audit", help="who called what, allowed or denied, newest last")
    p.add_argument("--agent", metavar="NS", help="only calls about this namespace")
    p.add_argument("--denials", action="store_true", help="only denied calls")
    add_limit(p, default=50, most=None, what="the newest N entries")
    add_json(p)
    p.set_defaults(func=cmd_audit)


def registry() -> Any:
    from bourdon.access.trust import MemberRegistry

    return MemberRegistry(home())


def show_token(
    args: argparse.Namespace,
    member_id: str,
    token: str,
    verb: str,
    shares: dict[str, Any] | None = None,
) -> None:
    if args.json:
        answer = {"id": member_id, "token": token, "note": "shown once; only its SHA-256 is kept"}
        output.print_json({**answer, **({"shares": shares} if shares is not None else {})})
        return
    print(f"{verb} {member_id}. Its token, shown this once (only its SHA-256 is kept):\n")
    print(f"  {token}\n")
    print("The member sends it as 'Authorization: Bearer <token>' to the HTTP server.")
    if shares is not None:
        from bourdon.access.homebound import describe

        for line in describe(shares, f"member {member_id}"):
            print(line)


def cmd_add(args: argparse.Namespace) -> int:
    members = registry()
    token = members.add(
        args.id, args.tier, args.grant, peer=args.peer, keep_home=args.keep_prompts_home
    )
    shares = member_shares(args, members.get(args.id).caller())
    show_token(args, args.id, token, f"Enrolled {args.tier} member", shares)
    return 0


def member_shares(args: argparse.Namespace, caller: Any) -> dict[str, Any] | None:
    """What the member can read of the library over HTTP; None when there is no library."""
    from bourdon.access.homebound import shares
    from bourdon.cli.shared import library_path
    from bourdon.errors import BourdonError
    from bourdon.store.library import Library

    root = library_path(args)
    if not (root / "agents").is_dir():
        return None
    try:
        with Library.open(root) as library:
            head = library.head()
            found = [(a, library.manifest_at(head, a)) for a in library.agent_ids()]
    except BourdonError:
        return None
    manifests = [(a, d) for a, d in found if d is not None]
    return shares(manifests, caller.ceiling, agents=caller.readable(), keep_home=caller.keep_home)


def cmd_rotate(args: argparse.Namespace) -> int:
    token = registry().rotate(args.id)
    show_token(args, args.id, token, "New token for")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    member = registry().revoke(args.id)
    if args.json:
        output.print_json(member.public())
    else:
        print(f"Revoked {member.id}: its token is refused from the next request on.")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    members = registry()
    backup = members.convert()
    found = members.members()
    if args.json:
        output.print_json(
            {
                "registry": str(members.path),
                "converted": backup is not None,
                "backup": str(backup) if backup else None,
                "members": [m.public() for m in found],
            }
        )
    elif backup is None:
        count = output.plural(len(found), "member")
        print(f"{members.path} is already in bourdon's shape ({count}); nothing to do")
    else:
        print(
            f"Converted {members.path} to bourdon's shape: "
            f"{output.plural(len(found), 'member')}, same tokens"
        )
        print(f"  the reference's file is kept as {backup}")
        for m in found:
            ceiling = f", reads at most {m.max_access}" if m.max_access else ""
            state = "revoked" if m.revoked else "active"
            print(f"  {m.id}: {m.tier}, {state}{ceiling}")
    return 0


def cmd_grant(args: argparse.Namespace) -> int:
    return _show_member(args, registry().grant(args.id, args.namespace))


def cmd_ungrant(args: argparse.Namespace) -> int:
    return _show_member(args, registry().ungrant(args.id, args.namespace))


def _show_member(args: argparse.Namespace, member: Any) -> int:
    if args.json:
        output.print_json(member.public())
    else:
        print(
            f"{member.id} ({member.tier}) may read: {', '.join(member.grants) or 'nothing else'}"
            f" and its own namespace"
        )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    members = registry().members()
    if args.json:
        output.print_json({"members": [m.public() for m in members]})
        return 0
    if not members:
        print("No members yet: bourdon member add NAME [--tier trusted] [--grant AGENT]")
        return 0
    output.table(
        ["ID", "TIER", "GRANTS", "TOKEN", "STATE", "SINCE"],
        [
            [
                m.id,
                m.tier,
                ", ".join(m.grants) or "-",
                m.token_id + "...",
                "revoked" if m.revoked else "active",
                m.rotated or m.created,
            ]
            for m in members
        ],
    )
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from bourdon.access.audit import AuditLog

    records = AuditLog(home()).query(
        agent=args.agent, denials=args.denials, limit=args.limit
    )
    if args.json:
        output.print_json({"records": [r.to_dict() for r in records]})
        return 0
    if not records:
        print("The audit log is empty.")
        return 0
    output.table(
        ["TIME", "CALLER", "OP", "NAMESPACE", "DECISION", "STATUS", "DETAIL"],
        [[r.time, r.caller, r.op, r.namespace, r.decision, r.status, r.detail] for r in records],
    )
    return 0
