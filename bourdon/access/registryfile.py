"""The member registry file, ``federation.yaml``, in its two shapes: bourdon's own
(``members: [...]``) and the reference Bourdon's (``agents: {name: row}``), read as ``Member``
values that never carry more access than the reference gave them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.access.callers import QUARANTINED, TIERS, Caller
from bourdon.errors import LibraryError
from bourdon.formats import yamlio


@dataclass(frozen=True)
class Member:
    """One enrolled caller. ``token_sha256`` is the only trace of its token."""

    id: str
    tier: str = QUARANTINED
    grants: tuple[str, ...] = ()
    token_id: str = ""
    token_sha256: str = ""
    created: str = ""
    rotated: str | None = None
    revoked: str | None = None
    peer: bool = False  # another machine's bourdon server: answered from this library only
    max_access: str | None = None  # public or team: never answered above it
    keep_home: bool = False  # never answered with verbatim prompts or instruction notes
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)  # unknown keys, kept

    @property
    def active(self) -> bool:
        return self.revoked is None

    def caller(self, transport: str = "http") -> Caller:
        """This member as the caller of a request."""
        return Caller(
            self.id,
            self.tier,
            frozenset(self.grants),
            transport,
            self.peer,
            self.max_access,
            self.keep_home,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.extra,
            "id": self.id,
            "tier": self.tier,
            "grants": list(self.grants),
            "token_id": self.token_id,
            "token_sha256": self.token_sha256,
            "created": self.created,
            "rotated": self.rotated,
            "revoked": self.revoked,
            "peer": self.peer,
            **({"max_access": self.max_access} if self.max_access else {}),
            **({"keep_prompts_home": True} if self.keep_home else {}),
        }

    def public(self) -> dict[str, Any]:
        """What ``member list`` shows: everything but the token digest."""
        out = {k: v for k, v in self.to_dict().items() if k not in self.extra}
        out.pop("token_sha256")
        out["active"] = self.active
        return out


def parse_registry(raw: bytes, path: Path) -> dict[str, Member]:
    """The members of the registry file's bytes ``raw``, by id, whichever its shape."""
    data = yamlio.load(raw, what=str(path))
    reference = reference_rows(data)
    if reference is not None:
        return {name: _from_reference(name, row) for name, row in reference.items()}
    rows = data.get("members") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise LibraryError(f"{path} has no 'members' list; fix or remove the file")
    out = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise LibraryError(f"{path} has a member without an id; fix the file")
        grants = row.get("grants") or []
        out[row["id"]] = Member(
            id=row["id"],
            tier=str(row["tier"]) if row.get("tier") in TIERS else QUARANTINED,
            grants=tuple(g for g in grants if isinstance(g, str)),
            token_id=str(row.get("token_id") or ""),
            token_sha256=str(row.get("token_sha256") or ""),
            created=str(row.get("created") or ""),
            rotated=row.get("rotated"),
            revoked=row.get("revoked"),
            peer=row.get("peer") in (True, "true"),  # plain YAML scalars load as strings
            max_access=_ceiling(row.get("max_access")),
            keep_home=row.get("keep_prompts_home") in (True, "true"),
            extra={k: _scalar(v) for k, v in row.items() if k not in _OUR_KEYS},
        )
    return out


BACKUP_SUFFIX: Final = ".reference.bak"
_OUR_KEYS: Final = frozenset(
    "id tier grants token_id token_sha256 created rotated revoked peer max_access "
    "keep_prompts_home".split()
)
_REFERENCE_KEYS: Final = frozenset(
    "tier grants token_sha256 created_at rotated_at revoked revoked_at max_access".split()
)


def reference_rows(data: object) -> dict[str, dict[str, Any]] | None:
    """The reference's ``agents: {name: row}`` mapping, or ``None`` for any other shape."""
    if not isinstance(data, dict) or "members" in data:
        return None
    rows = data.get("agents")
    if not isinstance(rows, dict):
        return None
    return {str(k): v if isinstance(v, dict) else {} for k, v in rows.items()}


def _from_reference(name: str, row: Mapping[str, Any]) -> Member:
    """One row of the reference's registry as a member, with no more access than it had."""
    tier = row.get("tier")
    # The reference answers a request without a router-signed handoff as tainted (its
    # untrusted path) when the row requires one; bourdon has no handoffs, so: quarantined.
    if tier not in TIERS or row.get("handoff_required") in (True, "true"):
        tier = QUARANTINED
    revoked = row.get("revoked")
    gone = revoked is True or (isinstance(revoked, str) and revoked.lower() in ("true", "yes"))
    grants = row.get("grants") or []
    return Member(
        id=name,
        tier=str(tier),
        grants=tuple(g for g in grants if isinstance(g, str)) if isinstance(grants, list) else (),
        token_sha256=str(row.get("token_sha256") or ""),
        created=str(row.get("created_at") or ""),
        rotated=str(row["rotated_at"]) if row.get("rotated_at") else None,
        revoked=str(row.get("revoked_at") or "revoked") if gone else None,
        max_access=_ceiling(row.get("max_access"), reference=True),
        extra={k: _scalar(v) for k, v in row.items() if k not in _REFERENCE_KEYS},
    )


def _scalar(value: Any) -> Any:
    """YAML booleans (the reference writes them), which our strict YAML reads as words."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


def _ceiling(value: object, *, reference: bool = False) -> str | None:
    """A ``max_access`` as stored: absent means none; anything unknown means public, the
    lowest (ignoring it would widen access; the reference does the same)."""
    if value is None or (value == "" and not reference):
        return None
    return value if value in ("public", "team") else "public"
