"""Where things live in a library (DESIGN section 4)::

<library>/
  agents/<agent_id>.l5.yaml              live manifests
  staging/<caller>/<agent_id>.l5.yaml    quarantined writes, never served until promoted
  .bourdon/                              local and git-ignored: lock, caches, recovered files
"""

from __future__ import annotations

from typing import Final

from bourdon.model import AGENTS_DIR, LOCAL_DIR, STAGING_DIR, SUFFIX, check_agent_id

AGENTS: Final = AGENTS_DIR
STAGING: Final = STAGING_DIR
LOCAL: Final = LOCAL_DIR
INTENT: Final = f"{LOCAL_DIR}/intent.json"  # the paths of a write between its files and commit
ADOPTING: Final = f"{LOCAL_DIR}/adopting.json"  # an adoption of a reference library under way


def agent_path(agent_id: str) -> str:
    """Where an agent's live manifest lives, relative to the library."""
    return f"{AGENTS}/{check_agent_id(agent_id)}{SUFFIX}"


def staging_path(caller: str, agent_id: str) -> str:
    return f"{STAGING}/{check_agent_id(caller, 'caller id')}/{check_agent_id(agent_id)}{SUFFIX}"
