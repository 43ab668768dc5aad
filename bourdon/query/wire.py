"""The wire shape of rows: entity matches grouped across agents, sessions, notes, and
workstreams merged by name. Shared by the read tools and the turn-start answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bourdon.access.visibility import Access
from bourdon.model import Visibility, fold
from bourdon.query.index import Match
from bourdon.query.rows import EntityRow, NoteRow, SessionRow, WorkstreamRow
from bourdon.query.validity import Lifecycle, marks


def group_matches(
    matches: Iterable[Match], access: Access, lifecycle: Lifecycle | None = None
) -> list[dict[str, Any]]:
    """Entity matches grouped by name across agents (the reference's EntityMatch).

    With ``lifecycle`` (``Index.lifecycle()``), a group none of whose rows holds today is marked
    ``expired`` (or ``not_yet_valid``), one a visible row replaces carries ``superseded_by``
    and comes after the groups that are not replaced, and ``supersedes`` lists what a group
    replaces."""
    groups: dict[str, dict[str, Any]] = {}
    rows_of: dict[str, list[EntityRow]] = {}
    rank = {"exact": 0, "alias": 1, "fuzzy": 2}
    for m in matches:
        row = m.row
        if not access.allows(row):
            continue
        group = groups.setdefault(
            fold(row.name),
            {
                "name": row.name,
                "agents": [],
                "types": [],
                "summaries": {},
                "tags": [],
                "aliases": [],
                "visibility": "public",
                "match": m.kind,
                "score": m.score,
                "last_touched": None,
            },
        )
        rows_of.setdefault(fold(row.name), []).append(row)
        if (rank[m.kind], -m.score) < (rank[group["match"]], -group["score"]):
            group["match"], group["score"] = m.kind, m.score
        _add(group["agents"], row.agent)
        if row.visibility > Visibility[group["visibility"].upper()]:
            group["visibility"] = str(Visibility(row.visibility))
        if row.type:
            _add(group["types"], row.type)
        if row.summary:
            group["summaries"][row.agent] = row.summary
        for tag in row.tags:
            _add(group["tags"], tag)
        for alias in row.aliases:
            _add(group["aliases"], alias)
        if row.last_touched and (group["last_touched"] or "") < row.last_touched:
            group["last_touched"] = row.last_touched
    if lifecycle is not None:
        for key, group in groups.items():
            _mark(group, rows_of[key], lifecycle, access)
    ordered = sorted(
        groups.values(),
        key=lambda g: (
            "superseded_by" in g,
            rank[g["match"]],
            -g["score"],
            -len(g["agents"]),
            g["name"],
        ),
    )
    return ordered


def _mark(
    group: dict[str, Any], rows: list[EntityRow], lifecycle: Lifecycle, access: Access
) -> None:
    group.update(marks(rows, lifecycle.day))
    if not lifecycle.links:
        return
    newer = lifecycle.successor(group["name"], access.allows)
    if newer is not None:
        group["superseded_by"] = newer.name
    older = [name for row in rows for name in row.supersedes if fold(name) != fold(row.name)]
    if older:
        group["supersedes"] = list(dict.fromkeys(older))


def _add(items: list[Any], item: Any) -> None:
    if item not in items:
        items.append(item)


def session_dict(row: SessionRow, summary: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "agent": row.agent,
        "date": row.date,
        "cwd": row.cwd,
        "project_focus": list(row.project_focus),
        "visibility": str(Visibility(row.visibility)),
    }
    if row.session_id:
        out["session_id"] = row.session_id
    if not summary:
        out["key_actions"] = list(row.key_actions)
        out["files_touched"] = list(row.files_touched)
    return out


def note_dict(row: NoteRow, day: str | None = None) -> dict[str, Any]:
    """A note on the wire; with ``day``, marked ``expired`` when its ``valid_to`` passed."""
    out: dict[str, Any] = {
        "agent": row.agent,
        "date": row.date,
        "text": row.text,
        "related_entities": list(row.related_entities),
        "tags": list(row.tags),
    }
    return out | marks((row,), day) if day else out


def merge_workstreams(
    rows: Iterable[WorkstreamRow], day: str | None = None
) -> list[dict[str, Any]]:
    """Workstreams merged by name; with ``day``, marked when none of a name's rows holds."""
    out: dict[str, dict[str, Any]] = {}
    rows_of: dict[str, list[WorkstreamRow]] = {}
    for w in rows:
        rows_of.setdefault(fold(w.name), []).append(w)
        item = out.setdefault(
            fold(w.name),
            {
                "name": w.name,
                "status": w.status,
                "summary": w.summary,
                "agents": [],
                "summaries": {},
                "started": w.started,
                "last_touched": w.last_touched,
                "related_entities": [],
                "tags": [],
            },
        )
        _add(item["agents"], w.agent)
        if w.summary:
            item["summaries"][w.agent] = w.summary
        if w.last_touched and (item["last_touched"] or "") < w.last_touched:
            item["last_touched"], item["status"] = w.last_touched, w.status
        if w.started and (not item["started"] or w.started < item["started"]):
            item["started"] = w.started
        for name in w.related_entities:
            _add(item["related_entities"], name)
        for tag in w.tags:
            _add(item["tags"], tag)
    if day:
        for key, item in out.items():
            item.update(marks(rows_of[key], day))
    return sorted(out.values(), key=lambda i: (i["last_touched"] or "", i["name"]), reverse=True)
