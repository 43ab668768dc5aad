"""The history pages: every commit the caller may read, newest first, with its provenance, and
one commit's diff, row by row.

Both are read at the page's level, not the caller's ceiling: the operator reading at ``team``
gets the counts and rows a team reader gets (``list_memory_versions`` recounts a subject for
a level below private), so the page never says that a private row was added. ``row_diff`` is
the staging review's diff too.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode

from starlette.responses import Response

from bourdon.access.visibility import filter_manifest
from bourdon.errors import NotFoundError
from bourdon.model import ROW_SECTIONS, Manifest, Visibility, row_key, row_visibility
from bourdon.merge.twoway import label
from bourdon.query.tracediff import UNCOMPARED
from bourdon.serve.caller import scope_of
from bourdon.serve.web.app import PREFIX, Page
from bourdon.serve.web.view import View
from bourdon.serve.writes import history as versions
from bourdon.store.library import Library

PER_PAGE: Final = 20
MAX_VERSIONS: Final = versions.MAX_VERSIONS  # the tool lists at most this many per agent
SECTION_TITLES: Final = {
    "known_entities": "Entities",
    "recent_sessions": "Sessions",
    "workstreams": "Workstreams",
    "notes": "Notes",
}


# -- the diff, row by row -------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class RowChange:
    """One row added, changed or removed: its name as people read it, and its fields."""

    kind: str  # added | changed | removed
    label: str
    visibility: str
    fields: list[FieldChange]


@dataclass
class Diff:
    """What changed from one manifest to another, as a reader at one level may see it."""

    sections: list[tuple[str, str, list[RowChange]]] = field(default_factory=list)
    agent: list[FieldChange] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for _, _, rows in self.sections for r in rows if r.kind == kind)

    @property
    def empty(self) -> bool:
        return not self.agent and not self.sections


def shown(value: Any) -> str:
    """A field's value as one line of text: lists joined, mappings as ``key: value``."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(shown(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {shown(v)}" for k, v in value.items())
    return str(value)


def _fields(before: Any, after: Any) -> list[FieldChange]:
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    return [
        FieldChange(key, shown(old.get(key)), shown(new.get(key)))
        for key in sorted(set(old) | set(new), key=str)
        if key not in UNCOMPARED and old.get(key) != new.get(key)
    ]


def row_diff(
    before: dict[str, Any] | None, after: dict[str, Any] | None, level: int, keep_home: bool
) -> Diff:
    """Rows added, changed (field by field) and removed from ``before`` to ``after``, by
    section, with every row above ``level`` left out of both sides first: a hidden row is
    neither listed nor counted."""
    seen = Visibility(level)
    old = filter_manifest(before, seen, keep_home=keep_home) if before else {}
    new = filter_manifest(after, seen, keep_home=keep_home) if after else {}
    diff = Diff(agent=_fields(old.get("agent"), new.get("agent")))
    for section in ROW_SECTIONS:
        rows_before = {row_key(section, r): r for r in old.get(section) or []}
        rows_after = {row_key(section, r): r for r in new.get(section) or []}
        policy = Manifest(new or old).policy
        out = []
        for key, row in rows_after.items():
            if key not in rows_before:
                out.append(_row("added", section, row, policy, _fields({}, row)))
            elif rows_before[key] != row:
                changed = _fields(rows_before[key], row)
                if changed:
                    out.append(_row("changed", section, row, policy, changed))
        for key, row in rows_before.items():
            if key not in rows_after:
                out.append(_row("removed", section, row, Manifest(old).policy, []))
        if out:
            diff.sections.append((section, SECTION_TITLES.get(section, section), out))
    return diff


def _row(
    kind: str, section: str, row: dict[str, Any], policy: Any, fields: list[FieldChange]
) -> RowChange:
    return RowChange(kind, label(section, row), str(row_visibility(row, policy)), fields)


# -- links -----------------------------------------------------------------------------------


def page_level(view: View) -> int:
    return int(Visibility.parse(view.level))


def link(view: View, path: str, **params: Any) -> str:
    """``path`` under /ui with ``params`` (those given a value) and the page's level when it
    is not the default, encoded (never concatenated from user text)."""
    query = {k: v for k, v in params.items() if v not in (None, "")}
    if view.level != "team":
        query["level"] = view.level
    return PREFIX + path + ("?" + urlencode(query) if query else "")


def library_of(view: View) -> Library:
    return view.server.bourdon_guard.library  # type: ignore[attr-defined,no-any-return]


# -- the list of commits ---------------------------------------------------------------------


async def _agents(view: View, library: Library) -> list[str]:
    """The agents whose history the caller may read (its grants, for a quarantined member)."""

    def work(caller, decision):  # type: ignore[no-untyped-def]
        readable = caller.readable()
        return {"agents": [a for a in library.agent_ids() if readable is None or a in readable]}

    answer = await view.read("list_agents", None, work)
    return list(answer["agents"])


async def _versions(
    view: View, library: Library, agent_id: str, count: int, level: int
) -> dict[str, Any]:
    """``list_memory_versions`` for ``agent_id`` under its policy rule, at the page's level."""
    return dict(
        await view.read(
            "list_memory_versions",
            agent_id,
            lambda caller, decision: versions.list_memory_versions(
                library, agent_id, count, level
            ),
        )
    )


def _page_number(view: View) -> int:
    try:
        return max(1, int(view.request.query_params.get("page", "1")))
    except ValueError:
        return 1


async def history_page(view: View) -> Response:
    library = library_of(view)
    level = page_level(view)
    agent = view.request.query_params.get("agent") or None
    page = min(_page_number(view), MAX_VERSIONS // PER_PAGE)
    wanted = page * PER_PAGE
    agents = [agent] if agent else await _agents(view, library)
    lists: list[list[dict[str, Any]]] = []
    more = False
    for agent_id in agents:
        answer = await _versions(view, library, agent_id, wanted, level)
        lists.append(answer["versions"])
        more = more or bool(answer["meta"]["truncated"])
    # Each list is in git's order, newest first; commits in the same second keep that order.
    rows = list(heapq.merge(*lists, key=lambda v: str(v["taken_at"]), reverse=True))
    more = more or len(rows) > wanted
    shown_rows = rows[(page - 1) * PER_PAGE : wanted]
    for row in shown_rows:
        row["href"] = link(view, f"/history/{row['agent_id']}/{row['version_id']}")
        row["agent_href"] = link(view, "/history", agent=row["agent_id"])
    older = link(view, "/history", agent=agent, page=page + 1) if more else None
    if older and page + 1 > MAX_VERSIONS // PER_PAGE:
        older = None  # past what the tool lists: the CLI shows the rest
    newer = link(view, "/history", agent=agent, page=page - 1 if page > 2 else None)
    return view.render(
        "history.html",
        active="history",
        agent=agent,
        versions=shown_rows,
        page=page,
        older=older,
        newer=newer if page > 1 else None,
        capped=more and older is None,
        all_href=link(view, "/history"),
    )


# -- one commit ------------------------------------------------------------------------------


async def commit_page(view: View) -> Response:
    library = library_of(view)
    level = page_level(view)
    agent_id = view.request.path_params["agent_id"]
    version_id = view.request.path_params["version"]

    def work(caller, decision):  # type: ignore[no-untyped-def]
        every = library.history(agent_id, limit=None)
        at = next((i for i, v in enumerate(every) if v.version_id == version_id), None)
        if at is None:
            raise NotFoundError(
                f"{agent_id!r} has no version {version_id!r}; its history lists the ones it has"
            )
        version = every[at]
        before = _data(library, agent_id, every[at + 1].version_id) if at + 1 < len(every) else None
        after = _data(library, agent_id, version.version_id)
        keep_home = scope_of(caller).keep_home
        return {"version": version, "diff": row_diff(before, after, level, keep_home)}

    # Under explain_memory_change's rule: this page says what one write changed, as it does.
    answer = await view.read("explain_memory_change", agent_id, work)
    diff: Diff = answer["diff"]
    return view.render(
        "commit.html",
        active="history",
        agent_id=agent_id,
        commit=answer["version"],
        diff=diff,
        counts={k: diff.count(k) for k in ("added", "changed", "removed")},
        agent_href=link(view, "/history", agent=agent_id),
        agent_page=link(view, f"/agents/{agent_id}"),
    )


def _data(library: Library, agent_id: str, version_id: str) -> dict[str, Any] | None:
    """The manifest at a version; ``None`` where the version removed it."""
    try:
        return library.read(agent_id, version_id).data
    except NotFoundError:
        return None


PAGES: Final = [
    Page("/history", history_page),
    Page("/history/{agent_id}/{version}", commit_page),
]
