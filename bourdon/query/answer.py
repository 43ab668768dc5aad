"""What every read answer shares: its ``meta`` object, and the checks of its input.

``meta`` carries the level, bounds, counts and warnings (manifests and rows the index left out,
told only to a caller who may see them). The checks raise ``InputError`` (400) with a message
that says what to send instead, and ``NotFoundError`` (404) for an unknown agent.
"""

from __future__ import annotations

from typing import Any

from bourdon.access.visibility import Access
from bourdon.errors import InputError, NotFoundError
from bourdon.model import check_agent_id
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
