"""The L5 manifest as values: names of its parts, identity rules, visibility. No I/O.

A manifest is kept as the plain mapping the schema describes (``Manifest.data``), because every
layer (merge, digest, YAML, the index) works on that shape and a parallel class tree would only
add copies. This module names the parts and holds the rules that are about identity:

- which agent ids are acceptable (``check_agent_id``),
- what makes two rows "the same row" (``row_key``),
- how a row's visibility is decided (``row_visibility``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from bourdon.errors import InputError

SPEC_VERSION: Final = "0.1"

# Where things live in a library (DESIGN section 4).
AGENTS_DIR: Final = "agents"
STAGING_DIR: Final = "staging"
LOCAL_DIR: Final = ".bourdon"
SUFFIX: Final = ".l5.yaml"

ENTITIES: Final = "known_entities"
SESSIONS: Final = "recent_sessions"
WORKSTREAMS: Final = "known_workstreams"
NOTES: Final = "notes"
ROW_SECTIONS: Final = (ENTITIES, SESSIONS, WORKSTREAMS, NOTES)

AgentType = Literal[
    "code-assistant",
    "note-capture",
    "local-swarm",
    "customer-support",
    "research-assistant",
    "creative-collaborator",
    "project-manager",
    "tutor",
    "other",
]
AGENT_TYPES: Final[tuple[str, ...]] = get_args(AgentType)
AGENT_FIELDS: Final = ("id", "type", "instance", "role_narrative")

# Fields holding lists of strings: merged as a union, and a bare string is one item.
LIST_FIELDS: Final = frozenset(
    {
        "aliases",
        "tags",
        "project_focus",
        "key_actions",
        "files_touched",
        "related_entities",
        "supersedes",
        "capabilities",
        "private_tags",
        "team_tags",
    }
)

# Most items a list field may hold (schemas/l5.schema.json maxItems; a test keeps them equal).
# Merges trim a longer union by dropping the oldest items.
LIST_LIMITS: Final = {
    "aliases": 16,
    "tags": 32,
    "project_focus": 16,
    "key_actions": 10,
    "files_touched": 50,
    "related_entities": 32,
    "supersedes": 16,
    "capabilities": 64,
    "private_tags": 32,
    "team_tags": 32,
}
_SECTION_LIST_LIMITS: Final = {("notes", "related_entities"): 16}


def list_limit(section: str | None, key: str) -> int | None:
    """The most items ``key`` may hold in a row of ``section`` (``None``: top level)."""
    return _SECTION_LIST_LIMITS.get((section or "", key), LIST_LIMITS.get(key))


_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
# Names that are files with a special meaning on Windows, where a library may be checked out.
_RESERVED_IDS: Final = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def check_agent_id(value: object, what: str = "agent id") -> str:
    """Return ``value`` if it is a valid agent id, else raise ``InputError`` saying why.

    Ids become file names, so the rule is strict: 1-64 characters of lower-case ASCII letters,
    digits, ``-`` and ``_``, starting with a letter or digit, matched whole (``"abc\\n"`` fails).
    Look-alikes (fullwidth or Cyrillic letters) are refused, never normalised.
    """
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}")
    shown = ascii(value) if len(value) <= 80 else ascii(value[:77]) + "..."
    if not value:
        raise InputError(f"{what} is empty; use lower-case letters, digits, '-' and '_'")
    if len(value) > 64:
        raise InputError(f"{what} {shown} is {len(value)} characters; the limit is 64")
    if not value.isascii():
        raise InputError(
            f"{what} {shown} has non-ASCII characters; use lower-case ASCII letters, digits, "
            "'-' and '_'"
        )
    if not _AGENT_ID.fullmatch(value):
        raise InputError(
            f"{what} {shown} is not a slug: use lower-case letters, digits, '-' and '_', "
            "starting with a letter or digit"
        )
    if value in _RESERVED_IDS:
        raise InputError(f"{what} {shown} is a reserved device name on Windows; pick another")
    return value


class Visibility(enum.IntEnum):
    """Who may see a row. A caller at access level L sees every row whose visibility is <= L."""

    PUBLIC = 0
    TEAM = 1
    PRIVATE = 2

    @classmethod
    def parse(cls, value: object, what: str = "access_level") -> Visibility:
        if isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                pass
        raise InputError(f"{what} {value!r} is not one of public, team, private")

    def __str__(self) -> str:
        return self.name.lower()


def row_visibility(row: Mapping[str, Any], policy: Mapping[str, Any] | None) -> Visibility:
    """Decide a row's visibility (DESIGN section 3).

    A tag in ``private_tags`` makes it private; else its explicit ``visibility``; else a tag in
    ``team_tags`` makes it team; else the policy default; else team, the safe direction.
    """
    spelled = row.get("visibility")
    if isinstance(spelled, str) and row.get("tags") is None:  # the usual row: no tags
        known = _SPELLED.get(spelled)
        if known is not None:
            return known
    policy = policy or {}
    listed = _as_list(row.get("tags"))
    if not all(isinstance(tag, str) for tag in listed):
        return Visibility.PRIVATE  # tags no one can read may hold a private one: the safe side
    tags = set(listed)
    if tags & {t for t in _as_list(policy.get("private_tags")) if isinstance(t, str)}:
        return Visibility.PRIVATE
    explicit = row.get("visibility")
    if explicit is not None:
        # A visibility that is not one of the three (a hand-edited typo such as 'privat') is
        # read as private: nothing but the operator's explicit choice lowers a row.
        if isinstance(explicit, str) and explicit.upper() in Visibility.__members__:
            return Visibility[explicit.upper()]
        return Visibility.PRIVATE
    if tags & {t for t in _as_list(policy.get("team_tags")) if isinstance(t, str)}:
        return Visibility.TEAM
    default = policy.get("default")
    if isinstance(default, str) and default.upper() in Visibility.__members__:
        return Visibility[default.upper()]
    return Visibility.TEAM


# A row's ``visibility`` as written: the one answer when it has no tags.
_SPELLED: Final[dict[str, Visibility]] = {str(v): v for v in Visibility}


def _as_list(value: object) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def produced_by(row: object, source: Mapping[str, Any]) -> bool:
    """Whether ``row`` is the contribution of ``source`` (a reader on one machine), which a
    regeneration by that reader replaces.

    Only our own ``source`` object can say so. A committed row (``origin: committed``) is never
    a reader's, and a ``source`` given as a plain string names a producer but not its machine:
    such rows survive every regeneration.
    """
    if not isinstance(row, Mapping) or row.get("origin") == "committed":
        return False
    src = row.get("source")
    if not isinstance(src, Mapping):
        return False
    return all(src.get(k) == source.get(k) for k in ("kind", "name", "machine"))


def fold(text: str) -> str:
    """Case- and space-insensitive form of a name, used wherever names are compared."""
    return " ".join(text.casefold().split())


def row_key(section: str, row: Mapping[str, Any]) -> tuple[str, ...]:
    """What makes two rows of ``section`` the same row when merging.

    Entities and workstreams: the name, ignoring case. Sessions: date + cwd + session id when
    present. Notes: date + text.
    """
    if section in (ENTITIES, WORKSTREAMS):
        return (fold(str(row.get("name", ""))),)
    if section == SESSIONS:
        return (
            str(row.get("date", "")),
            str(row.get("cwd", "")),
            str(row.get("session_id", "")),
        )
    if section == NOTES:
        return (str(row.get("date", "")), str(row.get("text", "")))
    raise ValueError(f"unknown section {section!r}")


@dataclass(frozen=True)
class Manifest:
    """One agent's L5 manifest, already validated, as the mapping the schema describes."""

    data: Mapping[str, Any]

    @property
    def agent_id(self) -> str:
        return str(self.data["agent"]["id"])

    @property
    def agent_type(self) -> str:
        return str(self.data["agent"]["type"])

    @property
    def policy(self) -> Mapping[str, Any]:
        policy = self.data.get("visibility_policy")
        return policy if isinstance(policy, Mapping) else {}

    def rows(self, section: str) -> list[Mapping[str, Any]]:
        rows = self.data.get(section)
        return list(rows) if isinstance(rows, list) else []

    def all_rows(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for section in ROW_SECTIONS:
            for row in self.rows(section):
                yield section, row

    def counts(self) -> dict[str, int]:
        return {section: len(self.rows(section)) for section in ROW_SECTIONS}
