"""What every read answer shares: its ``meta`` object, and the checks of its input.

``meta`` carries the level, bounds, counts and warnings (manifests and rows the index left out,
told only to a caller who may see them). When the level asked for hides matches a wider level
the caller is entitled to would show, ``meta.hidden`` counts them by level and ``meta.hint``
says how to ask (``hidden``): a caller is never told about rows it may not read, not even how
many. The checks raise ``InputError`` (400) with a message
that says what to send instead, and ``NotFoundError`` (404) for an unknown agent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from bourdon.access.visibility import Access, Scope, resolve
from bourdon.errors import InputError, NotFoundError
from bourdon.model import Visibility, check_agent_id
from bourdon.query.index import Index


def meta(index: Index, access: Access | None = None, **extra: Any) -> dict[str, Any]:
    """The ``meta`` object every answer carries: level, bounds, counts, warnings."""
    warnings = sorted(
        text
        for name, text in index.problems.items()
        if access is None or access.allows_agent(name.removesuffix(".l5.yaml"))
    )
    level, agents = (access.level, access.agents) if access is not None else (2, None)
    warnings += index.row_warnings(level, agents)
    if access is not None and access.warning:
        warnings.insert(0, access.warning)
    out: dict[str, Any] = {}
    if access is not None:
        out.update(access.to_meta())
    out.update(extra)
    out["warnings"] = warnings + list(out.pop("warnings", []))
    return out


def require_text(value: object, what: str, example: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} is empty; pass a name such as {example!r}")
    if len(value) > 512:
        raise InputError(f"{what} is {len(value)} characters; keep it under 512")
    return value.strip()


def require_agent(index: Index, agent: object, access: Access | None = None) -> str:
    """A known agent id the caller may read; the 404 names only agents it may see."""
    agent_id = check_agent_id(agent, "agent")
    visible = [a for a in sorted(index.agents) if access is None or access.allows_agent(a)]
    if agent_id not in visible:
        known = ", ".join(visible) or "none yet"
        raise NotFoundError(f"no agent {agent_id!r} in this library; known agents: {known}")
    return agent_id


def optional_agent(index: Index, agent: object, access: Access | None = None) -> str | None:
    return None if agent is None or agent == "" else require_agent(index, agent, access)


# How to ask for each level above public, in the tools' own parameters.
ASK: Final = {
    Visibility.TEAM: "access_level='team'",
    Visibility.PRIVATE: "access_level='private' and include_private=true",
}


def wider(access: Access, scope: Scope) -> list[Access]:
    """The levels above ``access`` that this caller would be answered at if it asked: team for
    any caller whose ceiling allows it, private for the local operator only (``resolve``)."""
    widest = resolve("private", True, scope=scope).level
    return [
        dataclasses.replace(access, level=level, warning=None)
        for level in (Visibility.TEAM, Visibility.PRIVATE)
        if access.level < level <= widest
    ]


def hidden(
    access: Access,
    scope: Scope,
    more_at: Callable[[Access], int],
    what: tuple[str, str] = ("match", "matches"),
) -> dict[str, Any]:
    """``meta``'s ``hidden`` and ``hint`` keys, or nothing: ``more_at(wider)`` counts the
    matches a wider level would add to this answer's."""
    counts = [(a.level, more_at(a)) for a in wider(access, scope)]
    shown = [(level, n) for level, n in counts if n > 0]
    if not shown:
        return {}
    return {
        "hidden": [{"access_level": str(level), "count": n} for level, n in shown],
        "hint": "; ".join(f"{n} more {what[n != 1]} with {ASK[level]}" for level, n in shown),
    }


def hidden_dated(
    rows: Iterable[Dated],
    access: Access,
    scope: Scope,
    agent_id: str | None,
    facts: Mapping[str, Any],
    kind: str,
) -> dict[str, Any]:
    """How many rows of the same window a wider level the caller may ask for would add.

    ``rows`` are newest first (as the index keeps them): one pass, ended at the window's
    start, counts the hidden rows by visibility."""
    levels = wider(access, scope)
    if not levels:
        return {}
    start = facts.get("since_applied")
    widest = levels[-1]
    by_level: dict[int, int] = {}
    for r in rows:
        if not r.date:
            continue
        if start is not None and r.date < start:
            break
        # Hidden by its level alone (namespaces and prompts kept home are the same at both).
        hidden_here = access.level < r.visibility <= widest.level
        if hidden_here and (agent_id is None or r.agent == agent_id) and widest.allows(r):
            by_level[r.visibility] = by_level.get(r.visibility, 0) + 1

    def more_at(level: Access) -> int:
        return sum(n for v, n in by_level.items() if v <= level.level)

    return hidden(access, scope, more_at, (kind, kind + "s"))


class Dated(Protocol):
    @property
    def agent(self) -> str: ...

    @property
    def visibility(self) -> int: ...

    @property
    def date(self) -> str: ...
