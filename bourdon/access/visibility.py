"""Access levels and what a caller at a level may see (pure).

A row's own visibility is decided by ``model.row_visibility``. This module decides the level a
request is answered at, and filters whole manifests for the views that return them.

Private rows are a second-line-of-defence case: they are shown only when the caller asks for
``access_level="private"`` *and* passes ``include_private=True``. Either alone answers at team.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bourdon.access.homebound import indexed_stays_home, stays_home
from bourdon.errors import InputError
from bourdon.model import ROW_SECTIONS, Manifest, Visibility, row_visibility

LEVELS = ("public", "team", "private")  # access_level's only spellings


class Row(Protocol):
    @property
    def agent(self) -> str: ...

    @property
    def visibility(self) -> int: ...


@dataclass(frozen=True)
class Access:
    """What a request may see: a visibility level and, for quarantined callers, namespaces."""

    level: Visibility
    requested: str
    include_private: bool
    warning: str | None = None
    agents: frozenset[str] | None = None  # None: every namespace
    keep_home: bool = False  # prompts and instruction notes are never shown (access.homebound)

    def sees(self, visibility: int) -> bool:
        return visibility <= self.level

    def allows_agent(self, agent: str) -> bool:
        return self.agents is None or agent in self.agents

    def allows(self, row: Row) -> bool:
        """A row is shown only if both its visibility and its namespace allow it (and, for a
        caller that keeps prompts home, it is neither verbatim prompt text nor an instruction
        note)."""
        if self.keep_home and indexed_stays_home(row):
            return False
        return row.visibility <= self.level and (self.agents is None or row.agent in self.agents)

    def to_meta(self) -> dict[str, Any]:
        return {"access_level": str(self.level), "requested_access_level": self.requested}


@dataclass(frozen=True)
class Scope:
    """What the caller's identity allows, whatever it asks: namespaces, and whether it is local.

    ``agents`` None means every namespace. Callers over the network are not ``local``; the
    anonymous caller (``serve --allow-unauthenticated``) has a ``ceiling`` of public.
    """

    agents: frozenset[str] | None = None
    local: bool = True
    ceiling: Visibility = Visibility.PRIVATE
    keep_home: bool = False  # never shown verbatim prompts or instruction notes


OPEN = Scope()


def resolve(
    access_level: str | None,
    include_private: bool,
    default: str = "public",
    *,
    scope: Scope = OPEN,
) -> Access:
    """Parse ``access_level`` (400 on anything but public/team/private, in lower case, as
    documented) and apply the guards.

    Callers over the network are answered at team at most: private rows never leave the
    machine. The scope's ``agents`` limits the namespaces seen.
    """
    requested = default if access_level is None else access_level
    if requested not in LEVELS:
        raise InputError(
            f"access_level {requested!r} is not one of public, team, private (lower case, exactly)"
        )
    level = Visibility.parse(requested, "access_level")
    warning = None
    if level is Visibility.PRIVATE and not include_private:
        level = Visibility.TEAM
        warning = "private rows are shown only with include_private=true; answered at team"
    elif level is Visibility.PRIVATE and not scope.local:
        level = Visibility.TEAM
        warning = "private rows never leave this machine; answered at team"
    if level > scope.ceiling:
        level = scope.ceiling
        warning = f"this caller may read up to {level}; answered at {level}"
    return Access(
        level, str(requested), bool(include_private), warning, scope.agents, scope.keep_home
    )


def filter_manifest(
    data: Mapping[str, Any], level: Visibility, *, keep_home: bool = False
) -> dict[str, Any]:
    """The manifest as a caller at ``level`` may see it: rows above it removed (and with
    ``keep_home``, verbatim prompt text and instruction notes, ``access.homebound``).

    Below private, the policy's ``private_tags`` list is dropped too: the names of private tags
    say what someone keeps private.
    """
    policy = Manifest(data).policy
    out = {k: v for k, v in data.items() if k not in ROW_SECTIONS}
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if isinstance(rows, list):
            out[section] = [
                r
                for r in rows
                if isinstance(r, Mapping)
                and row_visibility(r, policy) <= level
                and not (keep_home and stays_home(section, r))
            ]
    if level < Visibility.PRIVATE and isinstance(out.get("visibility_policy"), Mapping):
        out["visibility_policy"] = {
            k: v for k, v in out["visibility_policy"].items() if k != "private_tags"
        }
    return out
