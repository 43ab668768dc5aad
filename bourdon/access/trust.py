"""The members of a library's server and their tokens: who may read and write (DESIGN section 6).

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

Who is asking, for one request, is a ``Caller`` (``bourdon.access.callers``); the file's two
shapes are read by ``bourdon.access.registryfile``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import filelock

from bourdon.access.callers import OPERATOR, QUARANTINED, TIERS
from bourdon.access.registryfile import BACKUP_SUFFIX, Member, parse_registry, reference_rows
from bourdon.errors import InputError, NotFoundError
from bourdon.formats import yamlio
from bourdon.model import check_agent_id
from bourdon.store.durable import atomic_write

TOKEN_PREFIX: Final = "bdn_"
REGISTRY_FILE: Final = "federation.yaml"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_hex(24)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


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
        return reference_rows(yamlio.load(raw, what=str(self.path))) is not None

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
            self._members = parse_registry(raw, self.path) if raw else {}
            self._seen = raw

    # -- writing -------------------------------------------------------------------------

    def add(
        self,
        member_id: str,
        tier: str = QUARANTINED,
        grants: list[str] | None = None,
        *,
        peer: bool = False,
        keep_home: bool = False,
    ) -> str:
        """Enrol a member; return its token (the only time it is ever shown). ``keep_home``:
        never answer it with verbatim prompts or instruction notes (``access.homebound``)."""
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
                keep_home=keep_home,
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
            members = parse_registry(raw, self.path) if raw else {}
            yield members
            if raw and reference_rows(yamlio.load(raw, what=str(self.path))) is not None:
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
