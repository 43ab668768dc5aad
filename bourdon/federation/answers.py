"""Merging what peers said into a local answer, row by row and tool by tool.

Private rows are never requested, and a peer's answer is filtered again on arrival: a row it
marks above the level it was asked for is dropped, and a row it does not mark (the reference
implementation marks none) is taken at that level. Peer agents are tagged
``peer:<name>:<agent>``. Every merge is pure: it reads ``PeerAnswer`` values and changes the
local answer in place, and a peer's malformed rows are skipped, never trusted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from bourdon.errors import InputError
from bourdon.federation.client import PeerAnswer
from bourdon.model import Visibility

# Folds the peers' answers into the local answer, at the level the peers were asked for.
Merge: TypeAlias = Callable[[dict[str, Any], list[PeerAnswer], Visibility], None]


def seen_at(row: Mapping[str, Any], asked: Visibility) -> Visibility | None:
    """The level a peer's row is shown at, or None when it may not be shown.

    ``asked`` is the level the peer was asked for (the caller's level, never above team). A
    row marked above it is dropped, and so is one marked with a value nobody knows. A row
    without a ``visibility`` key is taken at ``asked``: the reference implementation marks
    none of the rows it answers with, and filters them itself to the level it is asked.
    """
    if "visibility" not in row:
        return asked
    try:
        level = Visibility.parse(row["visibility"])
    except InputError:
        return None
    return level if level <= asked else None


def _list(payload: dict[str, Any] | None, key: str) -> list[Any]:
    """A peer's list under ``key``; anything else (a hostile or broken peer) is no rows."""
    value = (payload or {}).get(key)
    return value if isinstance(value, list) else []


def peer_agent_names(answers: list[PeerAnswer]) -> set[str]:
    """Agent ids peers list (``list_agents``), untagged as the reference says."""
    return {a for answer in answers for a in _list(answer.payload, "agents") if isinstance(a, str)}


def tag(peer: str, agent: object) -> str:
    return f"peer:{peer}:{agent}"


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def merge_matches(
    local: list[dict[str, Any]], answers: list[PeerAnswer], key: str, level: Visibility
) -> list[dict[str, Any]]:
    """Entity matches (find_entity, recognition) from peers merged into ``local`` by name.

    A peer's agents are read from ``agents``, else ``source_agents`` (the reference's
    recognition answer has only those), and tagged into both where the match has them. A
    merged match's ``visibility`` is the highest of its rows', a peer's unmarked row counting
    at ``level``.
    """
    by_name = {str(m.get("name", "")).casefold(): m for m in local}
    for answer in answers:
        for match in _list(answer.payload, key):
            if not isinstance(match, dict):
                continue
            seen = seen_at(match, level)
            name = match.get("name")
            if seen is None or not isinstance(name, str) or not name.strip():
                continue
            name = name.strip()
            listed = _strings(match.get("agents")) or _strings(match.get("source_agents"))
            agents = [tag(answer.peer, a) for a in listed]
            mine = by_name.get(name.casefold())
            if mine is None:
                mine = {
                    k: v
                    for k, v in match.items()
                    if k not in ("agents", "source_agents", "summaries")
                }
                mine.update(name=name, agents=[], summaries={}, visibility=str(seen))
                if "source_agents" in match:
                    mine["source_agents"] = []
                local.append(mine)
                by_name[name.casefold()] = mine
            else:
                _raise_visibility(mine, seen)
                for field_name in ("types", "tags"):  # the reference unions these too
                    if isinstance(mine.get(field_name), list):
                        mine[field_name].extend(
                            v for v in _strings(match.get(field_name)) if v not in mine[field_name]
                        )
            for agent in agents:
                if agent not in mine.setdefault("agents", []):
                    mine["agents"].append(agent)
                if "source_agents" in mine and agent not in mine["source_agents"]:
                    mine["source_agents"].append(agent)
            summaries = match.get("summaries")
            if isinstance(summaries, dict) and isinstance(mine.get("summaries"), dict):
                for agent, text in summaries.items():
                    if isinstance(text, str):
                        mine["summaries"][tag(answer.peer, agent)] = text
    return local


def _raise_visibility(row: dict[str, Any], seen: Visibility) -> None:
    """A local match joined by a peer's row is as visible as the more restricted of them."""
    try:
        current = Visibility.parse(row.get("visibility", "public"))
    except InputError:
        return
    if seen > current:
        row["visibility"] = str(seen)


def merge_sessions(
    local: list[dict[str, Any]], answers: list[PeerAnswer], key: str, level: Visibility
) -> list[dict[str, Any]]:
    """Sessions from peers, tagged, without duplicates, newest first."""
    seen = {(s.get("agent"), s.get("date"), s.get("cwd"), s.get("session_id")) for s in local}
    out = list(local)
    for answer in answers:
        for session in _list(answer.payload, key):
            if not isinstance(session, dict) or (shown := seen_at(session, level)) is None:
                continue
            tagged = {
                **session,
                "agent": tag(answer.peer, session.get("agent")),
                "visibility": str(shown),
            }
            ident = (
                tagged["agent"],
                tagged.get("date"),
                tagged.get("cwd"),
                tagged.get("session_id"),
            )
            if ident not in seen:
                seen.add(ident)
                out.append(tagged)
    out.sort(key=lambda s: (str(s.get("date") or ""), str(s.get("agent"))), reverse=True)
    return out


def peer_meta(answers: list[PeerAnswer]) -> dict[str, Any]:
    """The keys every federated answer gains: who was asked, who answered, how fast, and who
    was skipped (backed off after failing: not asked, so not counted in ``peers_queried``;
    ``peer_errors`` says why and when it is tried again)."""
    return {
        "peer_latencies_us": {a.peer: a.latency_us for a in answers},
        "peers_queried": sum(1 for a in answers if not a.skipped),
        "peers_responded": sum(1 for a in answers if a.payload is not None),
        "peers_timed_out": sum(1 for a in answers if a.timed_out),
        "peers_skipped": [a.peer for a in answers if a.skipped],
        "peer_errors": {a.peer: a.error for a in answers if a.error},
    }


# -- one merge per federated tool ----------------------------------------------------------


def merge_found(
    answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility, *, limit: int
) -> None:
    """``find_entity``: peer matches join by name; the page is cut back to ``limit``."""
    merged = merge_matches(answer["matches"], answers, "matches", level)
    answer["matches"] = merged[:limit]
    answer["meta"].update(total_matches=len(merged), truncated=len(merged) > limit)


def merge_recent_work(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    """``list_recent_work``: peer sessions, counted in ``meta.peer_sessions``."""
    # Peer sessions join the first page on top of the local ones: cutting the page back to
    # `limit` would drop local sessions that next_cursor has already moved past.
    before = len(answer["sessions"])
    answer["sessions"] = merge_sessions(answer["sessions"], answers, "sessions", level)
    answer["meta"]["peer_sessions"] = len(answer["sessions"]) - before


def merge_summary(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    """``get_cross_agent_summary``: entities, recent sessions, and the agents they name."""
    answer["entities"] = merge_matches(answer["entities"], answers, "entities", level)
    answer["recent_sessions"] = merge_sessions(
        answer["recent_sessions"], answers, "recent_sessions", level
    )
    tagged = {a for e in answer["entities"] for a in e.get("agents", [])}
    tagged |= {s["agent"] for s in answer["recent_sessions"]}
    answer["agents"] = sorted(set(answer["agents"]) | tagged)


def merge_recognition(
    answer: dict[str, Any],
    answers: list[PeerAnswer],
    level: Visibility,
    *,
    line: Callable[[Mapping[str, Any]], str],
    header: str,
) -> None:
    """``prepare_recognition_context``: peer matches, and a ``line`` (under ``header``) for each
    new one in the prompt fragment while it stays within the answer's ``max_lines`` and
    ``max_chars``."""
    known = {m["name"].casefold() for m in answer["matched_entities"]}
    answer["matched_entities"] = merge_matches(
        answer["matched_entities"], answers, "matched_entities", level
    )
    extra = [m for m in answer["matched_entities"] if m["name"].casefold() not in known]
    lines = answer["prompt_context"].split("\n") if answer["prompt_context"] else []
    limits = answer["meta"]
    for match in extra:
        # ``line`` cleans the peer's text; whatever it returns is one line all the same, since
        # a clean header cannot keep a forged line from being read as bourdon's own.
        text = " ".join(line(match).splitlines())
        if not lines:
            lines.append(header)
        if (
            len(lines) >= limits["max_lines"]
            or len("\n".join([*lines, text])) > limits["max_chars"]
        ):
            limits["truncated"] = True
            break
        lines.append(text)
    answer["prompt_context"] = "\n".join(lines) if len(lines) > 1 else ""


def merge_agents(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    """``list_agents``: peer agents are listed by name, untagged (the reference: provenance
    lives in the detailed tools)."""
    answer.update(agents=sorted(set(answer["agents"]) | peer_agent_names(answers)))
