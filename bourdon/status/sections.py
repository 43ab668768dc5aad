"""The sections of a health report, each shaped from its facts for one ``Audience``.

What an audience may not see is left out, never blurred: other namespaces' agents, private
rows for a caller below private, and, without ``detail``, paths, URLs and names of members,
peers, remotes and plugins. ``health.compose`` puts the sections together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.callers import QUARANTINED, TRUSTED
from bourdon.digest import digest8
from bourdon.model import AGENTS_DIR, ROW_SECTIONS, SUFFIX, Visibility
from bourdon.replicate.state import safe_url
from bourdon.status.sources import LEVELS

if TYPE_CHECKING:
    from bourdon.access.registryfile import Member
    from bourdon.federation.peers import Peer
    from bourdon.replicate.state import RemoteState
    from bourdon.status.health import Audience
    from bourdon.store.staging import StagedWrite

STALE_STAGING_DAYS: Final = 7  # a staged write waiting longer than this is flagged stale
STALE_STAGING_SECONDS: Final = STALE_STAGING_DAYS * 86_400


def agents(raw: Mapping[str, dict[str, Any]] | None, audience: Audience) -> dict[str, Any] | None:
    if raw is None:
        return None
    agents: dict[str, Any] = {}
    totals = dict.fromkeys(ROW_SECTIONS, 0)
    by_level = dict.fromkeys(LEVELS if audience.private else LEVELS[:2], 0)
    for agent_id in sorted(raw):
        if not audience.may_read(agent_id):
            continue
        facts = raw[agent_id]
        if "problem" in facts:
            agents[agent_id] = {"valid": False, "problem": facts["problem"]}
            continue
        seen = facts["seen"][audience.private]
        path = f"{AGENTS_DIR}/{agent_id}{SUFFIX}"
        agents[agent_id] = {
            "valid": True,
            # Rows kept in the file but not served, each naming its row and field; a private
            # row's problem only for an audience that sees private rows.
            "skipped_rows": [
                {
                    "path": path,
                    "section": p.section,
                    "row": p.row,
                    "name": p.name,
                    "field": p.field,
                    "problem": p.reason,
                    "message": p.message(path),
                }
                for p in facts["skipped"]
                if audience.private or p.level < Visibility.PRIVATE
            ],
            "type": facts["type"],
            "spec_version": facts["spec_version"],
            "last_updated": facts["last_updated"],
            "digest8": facts["digest8"],
            "rows": dict(seen["rows"]),  # copies: the cached counts outlive this report
            "total": seen["total"],
            "by_visibility": dict(seen["by_visibility"]),
        }
        for section, n in seen["rows"].items():
            totals[section] += n
        for level, n in seen["by_visibility"].items():
            by_level[level] += n
    return {
        "count": len(agents),
        "agents": agents,
        "totals": {"rows": totals, "total": sum(totals.values()), "by_visibility": by_level},
    }


def schema_versions(
    raw: Mapping[str, dict[str, Any]] | None, audience: Audience
) -> dict[str, int] | None:
    if raw is None:
        return None
    seen = Counter(
        str(facts["spec_version"])
        for agent_id, facts in raw.items()
        if audience.may_read(agent_id) and "problem" not in facts
    )
    return dict(sorted(seen.items()))


def readers(found: Mapping[str, Any], audience: Audience) -> dict[str, Any]:
    entries = [e for e in found.get("readers", []) if audience.may_read(e["reader"])]
    if not audience.detail:
        entries = [without_paths(e) for e in entries]
    return {
        "readers": entries,
        # Plugin errors and failures of hooks for other agents may name anything.
        "broken_readers": list(found.get("broken", [])) if audience.detail else [],
        "other_hook_failures": list(found.get("other_hook_failures", []))
        if audience.detail
        else [],
    }


HIDDEN: Final = "not shown to quarantined members: it may name paths on the server's machine"


def without_paths(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A reader's entry without what may name a path of the server's machine: its store, the
    text of its health, of its last hook failure and of its drift or erosion. Whether each
    is fine, and when, stays."""
    out = {**entry, "store": None}
    health = entry.get("health")
    if isinstance(health, Mapping):
        out["health"] = {"ok": health.get("ok"), "message": HIDDEN, "fix": None}
    failure = entry.get("last_hook_failure")
    if isinstance(failure, Mapping):
        out["last_hook_failure"] = {
            "what": failure.get("what"),
            "agent": failure.get("agent"),
            "when": failure.get("when"),
            "error": HIDDEN,
        }
    drift = entry.get("drift")
    if isinstance(drift, Mapping):
        out["drift"] = {**drift, "reason": HIDDEN}
    if entry.get("reason") is not None:
        out["reason"] = HIDDEN
    return out


def staging(
    staged: list[StagedWrite] | str | None, audience: Audience, now: float
) -> dict[str, Any] | None:
    if staged is None:
        return None
    if isinstance(staged, str):
        return {"error": staged, "waiting": None, "stale": None, "writes": []}
    writes = []
    for s in staged:
        if not audience.detail and s.caller != audience.me:
            continue  # other members' ids are not a quarantined member's business
        when = _epoch(s.staged_at)
        age = now - when if when is not None else None
        writes.append(
            {
                "caller": s.caller,
                "agent_id": s.agent_id,
                "path": s.path,
                "rows": s.rows,
                "staged_at": s.staged_at,
                "age_seconds": round(age) if age is not None else None,
                "stale": age > STALE_STAGING_SECONDS if age is not None else None,
                "digest8": digest8(s.digest),
            }
        )
    return {
        "waiting": len(writes),
        "stale": sum(1 for w in writes if w["stale"]),
        "stale_after_days": STALE_STAGING_DAYS,
        "writes": writes,
    }


def peers(
    peers: list[Peer] | str,
    outcomes: Mapping[str, Mapping[str, Any]] | None,
    audience: Audience,
    backoff: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """Each peer as the last call saw it; in a server, ``backoff`` too: whether federated calls
    skip it now (``failures`` in a row, the last ``problem``, ``next_try_in_s``, ``probing``),
    ``None`` when they ask it."""
    if isinstance(peers, str):
        return {"configured": None, "error": peers, "peers": []}
    rows = []
    for peer in peers:
        outcome = (outcomes or {}).get(peer.name)
        skipped = (backoff or {}).get(peer.name)
        rows.append(
            {
                "name": peer.name,
                "url": safe_url(peer.url),
                "checked": outcome is not None,
                # Not checked: nothing is known, so nothing is claimed.
                "reachable": outcome.get("reachable") if outcome else None,
                "latency_ms": outcome.get("latency_ms") if outcome else None,
                "agents": outcome.get("agents") if outcome else None,
                "problem": outcome.get("problem") if outcome else None,
                "checked_at": outcome.get("checked_at") if outcome else None,
            }
        )
        if backoff is not None:
            rows[-1]["backoff"] = dict(skipped) if skipped else None
    out: dict[str, Any] = {
        "configured": len(rows),
        "reachable": sum(1 for r in rows if r["reachable"] is True),
        "unreachable": sum(1 for r in rows if r["reachable"] is False),
        "not_checked": sum(1 for r in rows if not r["checked"]),
    }
    if backoff is not None:
        out["backing_off"] = sum(1 for r in rows if r["backoff"])
    if audience.detail:
        out["peers"] = rows
    return out


def remotes(remotes: list[RemoteState] | str | None, audience: Audience) -> dict[str, Any] | None:
    if remotes is None:
        return None
    if isinstance(remotes, str):
        return {"configured": None, "error": remotes, "remotes": []}
    out: dict[str, Any] = {
        "configured": len(remotes),
        "failing": sum(1 for r in remotes if r.last_error),
    }
    if audience.detail:
        out["remotes"] = [{**r.to_dict(), "url": safe_url(r.url)} for r in remotes]
    return out


def members(members: list[Member] | str | None) -> dict[str, Any] | None:
    if members is None:
        return None  # no federation.yaml: nobody was ever enrolled
    if isinstance(members, str):
        return {"error": members}
    active = [m for m in members if m.active]
    return {
        "active": len(active),
        TRUSTED: sum(1 for m in active if m.tier == TRUSTED),
        QUARANTINED: sum(1 for m in active if m.tier == QUARANTINED),
        "revoked": len(members) - len(active),
        "peers": sum(1 for m in active if m.peer),
    }


def index(
    index: Mapping[str, Any] | None, head: str | None, audience: Audience
) -> dict[str, Any] | None:
    if index is None:
        return None
    if not index.get("loaded"):
        return {"loaded": False, "head": index.get("head")}
    skipped = {
        name: text
        for name, text in index.get("skipped", {}).items()
        if audience.may_read(name.removesuffix(SUFFIX))
    }
    out = {
        "loaded": True,
        "head": index.get("head"),
        "matches_head": index.get("head") == head,
        "generation": index.get("generation"),
        "skipped": [skipped[name] for name in sorted(skipped)],
    }
    if audience.detail:
        out["agents"] = index.get("agents")
    return out


def objects(found: Mapping[str, Any] | str | None) -> dict[str, Any] | None:
    """The object store: ``loose_estimate``, ``packs``, ``last_packed`` (RFC 3339, ``None``
    before the first pack), ``packing`` and ``loose_limit`` (0: packing disabled)."""
    if found is None:
        return None
    if isinstance(found, str):
        return {"error": found}
    out = {k: v for k, v in found.items() if k != "last_packed_at"}
    last = found.get("last_packed_at")
    out["last_packed"] = iso(last) if last is not None else None
    return out


def _epoch(iso: str | None) -> float | None:
    try:
        return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def iso(epoch: float) -> str:
    return (
        datetime.fromtimestamp(epoch, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )
