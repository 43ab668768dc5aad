"""Members, tokens and callers: who may read and write what (DESIGN section 6).

The registry lives in ``$BOURDON_HOME/federation.yaml`` (default ``~/.bourdon``)::

    members:
      - id: desk-chat
        tier: quarantined            # or trusted; quarantined is the default
        grants: [claude-code]        # namespaces (agent ids) it may read
        token_id: bdn_3f9a           # the token's first characters, to tell tokens apart
        token_sha256: 5e88...        # the token itself is shown once and never stored
        created: 2026-11-30T09:00:00Z
        rotated: null
        revoked: null

The reference Bourdon's registry (``{version: 1, agents: {<name>: {tier, grants, token_sha256,
revoked: bool, max_access, handoff_required, ...}}}``, the same file name and the same token
digest) is read as it is, so its tokens authenticate unchanged, never with more access than the
reference gave them: ``max_access`` caps the level answered, and a member whose every request the
reference narrowed to tainted without a signed handoff (``handoff_required``, which bourdon does
not implement) is quarantined. The first write converts the file to the shape above, with the
original kept beside it (``federation.yaml.reference.bak``); ``bourdon member import`` does
only that.

Tokens are ``bdn_`` + 48 hex characters (192 random bits). Only their SHA-256 is stored, and a
presented token is compared with every member's digest in constant time. The registry is read
again whenever its bytes change, so ``revoke`` and ``rotate`` take effect on the next request;
the check is by content, never by modification time, so two changes within one clock tick
cannot be missed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import filelock

from bourdon.errors import InputError, LibraryError, NotFoundError
from bourdon.formats import yamlio
from bourdon.model import Visibility, check_agent_id
from bourdon.store.durable import atomic_write

TOKEN_PREFIX: Final = "bdn_"
TRUSTED: Final = "trusted"
QUARANTINED: Final = "quarantined"
TIERS: Final = (TRUSTED, QUARANTINED)
OPERATOR: Final = "operator"
ANONYMOUS: Final = "anonymous"  # the id and tier of a tokenless HTTP caller (see Caller.anonymous)
REGISTRY_FILE: Final = "federation.yaml"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_hex(24)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


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
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)  # unknown keys, kept

    @property
    def active(self) -> bool:
        return self.revoked is None

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
        }

    def public(self) -> dict[str, Any]:
        """What ``member list`` shows: everything but the token digest."""
        out = {k: v for k, v in self.to_dict().items() if k not in self.extra}
        out.pop("token_sha256")
        out["active"] = self.active
        return out


@dataclass(frozen=True)
class Caller:
    """Who is asking, as the server sees it for one request."""

    id: str
    tier: str
    grants: frozenset[str] = field(default_factory=frozenset)
    transport: str = "stdio"
    peer: bool = False
    max_access: str | None = None  # the member's ceiling (public or team), if it has one

    @classmethod
    def operator(cls) -> Caller:
        """The local user on stdio: trusted, every namespace."""
        return cls(OPERATOR, TRUSTED, frozenset(), "stdio")

    @classmethod
    def anonymous(cls) -> Caller:
        """A request without a token to ``serve --allow-unauthenticated`` (loopback only):
        public rows of every namespace, no write (policy.ANONYMOUS_READS)."""
        return cls(ANONYMOUS, ANONYMOUS, frozenset(), "http")

    @property
    def is_operator(self) -> bool:
        return self.transport == "stdio" and self.id == OPERATOR

    @property
    def is_anonymous(self) -> bool:
        return self.tier == ANONYMOUS

    @property
    def ceiling(self) -> Visibility:
        """The widest visibility this caller is ever shown, whatever it asks: private only
        to the local operator, public only to the anonymous caller, and never above a member's
        own ``max_access`` (which only ever lowers it)."""
        if self.transport == "stdio":
            return Visibility.PRIVATE
        widest = Visibility.PUBLIC if self.is_anonymous else Visibility.TEAM
        if self.max_access:
            widest = min(widest, Visibility.parse(self.max_access))
        return widest

    @property
    def trusted(self) -> bool:
        return self.tier == TRUSTED

    def may_read(self, agent_id: str) -> bool:
        """Trusted (and anonymous) callers read every namespace; quarantined ones their grants
        and their own."""
        return self.trusted or self.is_anonymous or agent_id == self.id or agent_id in self.grants

    def readable(self) -> frozenset[str] | None:
        """The namespaces this caller may read; ``None`` means all of them (for the anonymous
        caller too: it sees only public rows, which any namespace may show)."""
        return None if self.trusted or self.is_anonymous else self.grants | {self.id}


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class MemberRegistry:
    """The members of this library's federation, kept in ``federation.yaml``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / REGISTRY_FILE
        self._seen: bytes | None = None
        self._members: dict[str, Member] = {}
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------------

    def members(self) -> list[Member]:
        self._reload()
        return sorted(self._members.values(), key=lambda m: m.id)

    def get(self, member_id: str) -> Member:
        self._reload()
        try:
            return self._members[member_id]
        except KeyError:
            raise NotFoundError(f"no member {member_id!r}; see 'bourdon member list'") from None

    def active_count(self) -> int:
        return sum(1 for m in self.members() if m.active)

    def authenticate(self, token: str | None) -> Member | None:
        """The active member holding ``token``, or ``None``. Constant time per member."""
        if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 256:
            return None
        presented = token_digest(token)
        found = None
        for member in self.members():
            if hmac.compare_digest(presented, member.token_sha256) and member.active:
                found = member
        return found

    def is_reference_shape(self) -> bool:
        """Is the file in the reference Bourdon's shape (an ``agents:`` mapping)?"""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return False
        return _reference_rows(yamlio.load(raw, what=str(self.path))) is not None

    def convert(self) -> Path | None:
        """Rewrite a reference-shaped file in bourdon's shape; return the backup of the original.

        ``None`` when there was nothing to convert. Every token keeps working: only digests
        are stored, and they are carried over as they are.
        """
        if not self.is_reference_shape():
            return None
        with self._editing():
            pass  # reading converts the rows; leaving backs the original up and writes ours
        return self.path.with_name(self.path.name + BACKUP_SUFFIX)

    def _reload(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raw = b""
        if raw == self._seen:
            return
        with self._lock:
            self._members = _parse(raw, self.path) if raw else {}
            self._seen = raw

    # -- writing -------------------------------------------------------------------------

    def add(
        self,
        member_id: str,
        tier: str = QUARANTINED,
        grants: list[str] | None = None,
        *,
        peer: bool = False,
    ) -> str:
        """Enrol a member; return its token (the only time it is ever shown)."""
        check_agent_id(member_id, "member id")
        if member_id == OPERATOR:
            raise InputError("'operator' names the local user on stdio; pick another member id")
        _check_tier(tier)
        for ns in grants or []:
            check_agent_id(ns, "namespace")
        token = new_token()
        with self._editing() as members:
            if member_id in members and members[member_id].active:
                raise InputError(
                    f"member {member_id!r} exists; use 'bourdon member rotate {member_id}' "
                    "for a new token"
                )
            members[member_id] = Member(
                member_id,
                tier,
                tuple(dict.fromkeys(grants or [])),
                token[:8],
                token_digest(token),
                _now(),
                peer=peer,
            )
        return token

    def rotate(self, member_id: str) -> str:
        token = new_token()
        with self._editing() as members:
            member = _existing(members, member_id)
            members[member_id] = replace(
                member,
                token_id=token[:8],
                token_sha256=token_digest(token),
                rotated=_now(),
                revoked=None,
            )
        return token

    def revoke(self, member_id: str) -> Member:
        with self._editing() as members:
            member = _existing(members, member_id)
            members[member_id] = replace(member, revoked=member.revoked or _now())
            return members[member_id]

    def grant(self, member_id: str, namespace: str) -> Member:
        check_agent_id(namespace, "namespace")
        with self._editing() as members:
            member = _existing(members, member_id)
            members[member_id] = replace(
                member, grants=tuple(dict.fromkeys((*member.grants, namespace)))
            )
            return members[member_id]

    def ungrant(self, member_id: str, namespace: str) -> Member:
        with self._editing() as members:
            member = _existing(members, member_id)
            members[member_id] = replace(
                member, grants=tuple(g for g in member.grants if g != namespace)
            )
            return members[member_id]

    def set_tier(self, member_id: str, tier: str) -> Member:
        _check_tier(tier)
        with self._editing() as members:
            members[member_id] = replace(_existing(members, member_id), tier=tier)
            return members[member_id]

    @contextlib.contextmanager
    def _editing(self) -> Iterator[dict[str, Member]]:
        """Read, change and write the registry under a cross-process lock."""
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        with filelock.FileLock(str(self.path) + ".lock", timeout=10):
            try:
                raw = self.path.read_bytes()
            except FileNotFoundError:
                raw = b""
            members = _parse(raw, self.path) if raw else {}
            yield members
            if raw and _reference_rows(yamlio.load(raw, what=str(self.path))) is not None:
                # The reference's own file: kept beside ours before the first write replaces it.
                backup = self.path.with_name(self.path.name + BACKUP_SUFFIX)
                if not backup.exists():
                    atomic_write(backup, raw, mode=0o600)
            data = {"members": [m.to_dict() for m in sorted(members.values(), key=lambda m: m.id)]}
            atomic_write(self.path, yamlio.dump(data), mode=0o600)  # the owner's eyes only
        self._seen = None


def _existing(members: dict[str, Member], member_id: str) -> Member:
    try:
        return members[member_id]
    except KeyError:
        raise NotFoundError(f"no member {member_id!r}; see 'bourdon member list'") from None


def _check_tier(tier: str) -> None:
    if tier not in TIERS:
        raise InputError(f"tier {tier!r} is not one of {', '.join(TIERS)}")


def _parse(raw: bytes, path: Path) -> dict[str, Member]:
    data = yamlio.load(raw, what=str(path))
    reference = _reference_rows(data)
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
            extra={k: _scalar(v) for k, v in row.items() if k not in _OUR_KEYS},
        )
    return out


BACKUP_SUFFIX: Final = ".reference.bak"
_OUR_KEYS: Final = frozenset(
    "id tier grants token_id token_sha256 created rotated revoked peer max_access".split()
)
_REFERENCE_KEYS: Final = frozenset(
    "tier grants token_sha256 created_at rotated_at revoked revoked_at max_access".split()
)


def _reference_rows(data: object) -> dict[str, dict[str, Any]] | None:
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
