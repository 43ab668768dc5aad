"""The ``bourdon.agents/v1`` envelope's entries: what one agent looks like to other machines.

``reads.export_agents`` assembles the envelope from these; a manifest the index could not read
still gets an entry, with its ``parse_error``.
"""

from __future__ import annotations

from typing import Any, Final

from bourdon.model import Visibility
from bourdon.query.rows import AgentView

AGENTS_SCHEMA: Final = "bourdon.agents/v1"
EXPORT_RECENT: Final = 10  # sessions listed in an entry's recent_activity


# The reference reports agents running right now (live_sessions, live_count) from a presence
# registry; bourdon keeps none, so no agent is ever reported live.
def not_live() -> dict[str, Any]:
    return {"live_sessions": [], "live_count": 0}


def envelope_entry(
    view: AgentView, level: Visibility, source: str, *, keep_home: bool = False
) -> dict[str, Any]:
    """One served agent, its sessions counted and listed up to ``level`` (``keep_home``: none
    holding verbatim prompt text, ``access.homebound``)."""
    sessions = sorted(
        (s for s in view.sessions if s.visibility <= level and not (keep_home and s.key_actions)),
        key=lambda s: s.key,
        reverse=True,
    )
    capabilities = view.data.get("capabilities")
    return {
        "id": view.agent_id,
        "type": view.agent.get("type"),
        "instance": view.agent.get("instance"),
        "role_narrative": view.agent.get("role_narrative"),
        "last_updated": view.data.get("last_updated"),
        "capability_count": len(capabilities) if isinstance(capabilities, list) else 0,
        "session_count": len(sessions),
        "freshest_session_date": next((s.date for s in sessions if s.date), None),
        "recent_activity": [
            {
                "date": s.date,
                "project_focus": list(s.project_focus),
                "key_actions": list(s.key_actions),
                "visibility": str(Visibility(s.visibility)),
            }
            for s in sessions[:EXPORT_RECENT]
        ],
        "parse_error": None,
        "source": source,
        "source_kind": "local",
        **not_live(),
    }


def unreadable_entry(agent_id: str, problem: str, source: str) -> dict[str, Any]:
    """An agent whose manifest the index skipped: nothing known but why."""
    return {
        "id": agent_id,
        "type": None,
        "instance": None,
        "role_narrative": None,
        "last_updated": None,
        "capability_count": None,
        "session_count": None,
        "freshest_session_date": None,
        "recent_activity": [],
        "parse_error": problem,
        "source": source,
        "source_kind": "local",
        **not_live(),
    }
