"""The entities a prompt mentions, as the turn-start answers rank them.

``recognize`` runs the caller's ``Recognizer`` (only names it may see) over the prompt and
groups the mentions by entity across agents: a name before an alias before a near miss, then
known to more agents, then touched more recently. ``confidence`` is the reference's bucket for
one of them.

Only rows that hold today are recognised (``bourdon.query.validity``: the index's tables leave
out the rest). A mentioned entity that a row the caller may see replaces (``supersedes``)
gives way to that row, which says what it stands in for (``formerly``), as the reference
presents "Orchard (formerly Lantern)".
"""

from __future__ import annotations

import re
from typing import Any, Final

from bourdon.access.visibility import Access
from bourdon.model import Visibility, fold
from bourdon.query.index import Index
from bourdon.query.rows import EntityRow
from bourdon.query.validity import live

MAX_PROMPT: Final = 64 * 1024  # characters of a prompt that are scanned
KIND_RANK: Final = {"exact": 0, "alias": 1, "fuzzy": 2}
KIND_SCORE: Final = {"exact": 100.0, "alias": 90.0, "fuzzy": 75.0}
CONFIDENCE_RANK: Final = {"high": 0, "medium": 1, "low": 2, "none": 3}


def recognize(index: Index, prompt: str, access: Access) -> list[dict[str, Any]]:
    """The entities ``prompt`` mentions that the caller may see, best first."""
    groups: dict[str, dict[str, Any]] = {}
    recognizer = index.recognizer_for(int(access.level), access.agents)
    lifecycle = index.lifecycle()
    for mention in recognizer.mentions(prompt[:MAX_PROMPT]):
        row: EntityRow = mention.key  # type: ignore[assignment]  # the index keys names by row
        if not access.allows(row) or not live(row, lifecycle.day):
            continue
        newer = (
            lifecycle.successor(row.name, access.allows, holding=True) if lifecycle.links else None
        )
        if newer is None:
            _join(groups, row, mention.kind, mention.phrase)
            continue
        for same in index.match(newer.name, fuzzy=False, visible=access.allows):
            if same.kind == "exact" and live(same.row, lifecycle.day):
                _join(groups, same.row, mention.kind, mention.phrase)
        formerly = groups[fold(newer.name)].setdefault("formerly", [])
        if row.name not in formerly:
            formerly.append(row.name)
    for old in [k for g in groups.values() for k in map(fold, g.get("formerly", ()))]:
        # Also named in the prompt, the older one still gives way (unless it too stands in
        # for another: two rows that each say they replace the other both stay).
        if "formerly" not in groups.get(old, {"formerly": ()}):
            del groups[old]
    ranked = sorted(groups.values(), key=_rank)
    for group in ranked:
        group["score"] = _score(group)
        group["source_agents"] = list(group["agents"])
    return ranked


def _join(groups: dict[str, dict[str, Any]], row: EntityRow, kind: str, phrase: str) -> None:
    """Add one mentioned row to its entity's group (made on its first row)."""
    group = groups.setdefault(
        fold(row.name),
        {
            "name": row.name,
            "type": row.type or "topic",
            "agents": [],
            "visibility": "public",
            "match": kind,
            "mentioned_as": phrase,
            "summary": None,
            "summaries": {},
            "last_touched": None,
        },
    )
    if KIND_RANK[kind] < KIND_RANK[group["match"]]:
        group["match"], group["mentioned_as"] = kind, phrase
    if row.agent not in group["agents"]:
        group["agents"].append(row.agent)
    if row.visibility > Visibility[group["visibility"].upper()]:
        group["visibility"] = str(Visibility(row.visibility))
    if row.summary:
        group["summaries"][row.agent] = row.summary
    if row.last_touched and (group["last_touched"] or "") < row.last_touched:
        group["last_touched"] = row.last_touched
        if row.summary:
            group["summary"] = row.summary
    if group["summary"] is None and row.summary:
        group["summary"] = row.summary


def _score(group: dict[str, Any]) -> float:
    return KIND_SCORE[group["match"]] + 2.0 * min(len(group["agents"]), 5)


def _rank(group: dict[str, Any]) -> tuple[int, int, str, str]:
    # Name before alias before near miss; then known to more agents; then touched recently.
    recency = group["last_touched"] or ""
    return (KIND_RANK[group["match"]], -len(group["agents"]), _invert(recency), group["name"])


def _invert(text: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


def confidence(match: dict[str, Any], prompt_words: list[str] | None) -> str:
    """The reference's confidence bucket: ``high`` when the prompt is the name itself,
    ``medium`` when it mentions a name or alias as written, ``low`` for a corrected near miss.
    ``prompt_words`` is ``name_words(prompt)``, computed once per call (``None``: too long to be
    a name)."""
    if match["match"] == "fuzzy":
        return "low"
    return "high" if prompt_words == name_words(match["mentioned_as"]) else "medium"


def name_words(text: str) -> list[str]:
    """Text as its words, so "Harbor-Gateway?" and "harbor gateway" are the same name."""
    return re.findall(r"\w+", fold(text))
