"""The history pages: every commit the caller may read, newest first, with its provenance, and
one commit's diff, row by row.

Both are read at the page's level, not the caller's ceiling: the operator reading at ``team``
gets the counts and rows a team reader gets (``list_memory_versions`` recounts a subject for
a level below private), so the page never says that a private row was added. ``row_diff`` is
the staging review's diff too.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.responses import Response

from bourdon.access.homebound import stays_home
from bourdon.errors import NotFoundError
from bourdon.merge.twoway import label
from bourdon.model import ROW_SECTIONS, Manifest, Visibility, row_key, row_visibility
from bourdon.query.tracediff import UNCOMPARED
from bourdon.serve.caller import scope_of
from bourdon.serve.web.app import Page
from bourdon.serve.web.filters import shown
from bourdon.serve.web.links import href, segment
from bourdon.serve.web.view import View
from bourdon.serve.writes import history as versions
from bourdon.store.library import Library

PER_PAGE: Final = 20
SHOWN_ROWS: Final = 50  # rows of one section listed on a diff (all are counted)
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


@dataclass(frozen=True)
class SectionDiff:
    """One section's changed rows: the first ``SHOWN_ROWS`` of them, and how many in all."""

    section: str
    title: str
    rows: list[RowChange]
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


@dataclass
class Diff:
    """What changed from one manifest to another, as a reader at one level may see it."""

    sections: list[SectionDiff] = field(default_factory=list)
    agent: list[FieldChange] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(s.counts[kind] for s in self.sections)

    @property
    def empty(self) -> bool:
        return not self.agent and not self.sections


def _differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return any(old.get(k) != new.get(k) for k in old.keys() | new.keys() if k not in UNCOMPARED)


def _fields(before: Any, after: Any) -> list[FieldChange]:
    old = before if isinstance(before, Mapping) else {}
    new = after if isinstance(after, Mapping) else {}
    return [
        FieldChange(key, shown(old.get(key)), shown(new.get(key)))
        for key in sorted(old.keys() | new.keys(), key=str)
        if key not in UNCOMPARED and old.get(key) != new.get(key)
    ]


def _rows(data: Mapping[str, Any], section: str) -> dict[tuple[str, ...], Mapping[str, Any]]:
    rows = data.get(section)
    if not isinstance(rows, list):
        return {}
    return {row_key(section, r): r for r in rows if isinstance(r, Mapping)}


def row_diff(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    level: int,
    keep_home: bool,
    limit: int | None = SHOWN_ROWS,
) -> Diff:
    """Rows added, changed (field by field) and removed from ``before`` to ``after``, by
    section, as a reader at ``level`` sees both sides: a hidden row is neither listed nor
    counted, and a row that became hidden reads as removed (as ``explain_memory_change``
    has it). ``limit``: rows listed per section (all are counted).
    """
    old, new = before or {}, after or {}
    old_policy, new_policy = Manifest(old).policy, Manifest(new).policy
    seen = Visibility(level)

    def visible(section: str, row: Mapping[str, Any] | None, policy: Any) -> bool:
        return (
            row is not None
            and row_visibility(row, policy) <= seen
            and not (keep_home and stays_home(section, row))
        )

    diff = Diff(agent=_fields(old.get("agent"), new.get("agent")))
    # A row equal on both sides is unchanged for every reader, unless the policy that decides
    # its visibility changed: then each one is looked at.
    same_policy = old_policy == new_policy
    for section in ROW_SECTIONS:
        rows_before, rows_after = _rows(old, section), _rows(new, section)
        counts = {"added": 0, "changed": 0, "removed": 0}
        listed: list[RowChange] = []
        for key in [*rows_after, *(k for k in rows_before if k not in rows_after)]:
            was, now = rows_before.get(key), rows_after.get(key)
            if same_policy and was is not None and was == now:
                continue
            saw = was if visible(section, was, old_policy) else None
            sees = now if visible(section, now, new_policy) else None
            kind = _kind(saw, sees)
            if kind is None:
                continue
            counts[kind] += 1
            if limit is None or len(listed) < limit:
                listed.append(_described(kind, section, saw, sees, (old_policy, new_policy)))
        if any(counts.values()):
            title = SECTION_TITLES.get(section, section)
            diff.sections.append(SectionDiff(section, title, listed, counts))
    return diff


def _kind(was: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> str | None:
    """How a row changed between its two visible sides (``None``: hidden or absent)."""
    if was is None:
        return None if now is None else "added"
    if now is None:
        return "removed"
    return "changed" if _differs(was, now) else None


def _described(
    kind: str,
    section: str,
    was: Mapping[str, Any] | None,
    now: Mapping[str, Any] | None,
    policies: tuple[Any, Any],
) -> RowChange:
    """A listed row: the removed one as it was, else as it is now with what changed."""
    if kind == "removed" or now is None:
        row = was or {}
        return RowChange(kind, label(section, row), _vis(row, policies[0]), [])
    return RowChange(kind, label(section, now), _vis(now, policies[1]), _fields(was or {}, now))


def _vis(row: Mapping[str, Any], policy: Any) -> str:
    return str(row_visibility(row, policy))


# -- links -----------------------------------------------------------------------------------


def page_level(view: View) -> int:
    return int(Visibility.parse(view.level))


def link(view: View, path: str, **params: Any) -> str:
    """``/ui`` + ``path`` with ``params``, at the page's level (``links.href``)."""
    return href(path, view.level, **params)


def row_limit(view: View) -> int | None:
    """Rows listed per section of a diff: ``SHOWN_ROWS``, or all of them with ``?rows=all``."""
    return None if view.request.query_params.get("rows") == "all" else SHOWN_ROWS


def library_of(view: View) -> Library:
    """The library the tools read (the guard's)."""
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
            lambda caller, decision: versions.list_memory_versions(library, agent_id, count, level),
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
        row["href"] = link(view, f"/history/{segment(row['agent_id'])}/{row['version_id']}")
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
        parent = every[at + 1].version_id if at + 1 < len(every) else None
        keep_home = scope_of(caller).keep_home
        diff = _commit_diff(
            library, agent_id, parent, version_id, level, keep_home, row_limit(view)
        )
        return {"version": every[at], "diff": diff}

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
        agent_page=link(view, f"/agents/{segment(agent_id)}"),
        all_href=link(view, f"/history/{segment(agent_id)}/{segment(version_id)}", rows="all"),
    )


@functools.lru_cache(
    maxsize=256
)  # two versions never change: what one reader sees between them neither
def _commit_diff(
    library: Library,
    agent_id: str,
    parent: str | None,
    version_id: str,
    level: int,
    keep_home: bool,
    limit: int | None,
) -> Diff:
    before = _data(library, agent_id, parent) if parent else None
    return row_diff(before, _data(library, agent_id, version_id), level, keep_home, limit)


def _data(library: Library, agent_id: str, version_id: str) -> dict[str, Any] | None:
    """The manifest at a version; ``None`` where the version removed it."""
    try:
        return dict(library.read(agent_id, version_id).data)
    except NotFoundError:
        return None


PAGES: Final = [
    Page("/history", history_page),
    Page("/history/{agent_id}/{version}", commit_page),
]
