"""Who is asking, for one request: a ``Caller`` with its tier, grants and transport.

Tiers: ``trusted`` members write live and read every namespace; ``quarantined`` ones (the
default) read their grants and their own namespace, and their writes are staged. The local user
on stdio is the ``operator``; a tokenless HTTP request to ``serve --allow-unauthenticated`` is
the ``anonymous`` caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from bourdon.model import Visibility

TRUSTED: Final = "trusted"
QUARANTINED: Final = "quarantined"
TIERS: Final = (TRUSTED, QUARANTINED)
OPERATOR: Final = "operator"
ANONYMOUS: Final = "anonymous"  # the id and tier of a tokenless HTTP caller (see Caller.anonymous)


@dataclass(frozen=True)
class Caller:
    """Who is asking, as the server sees it for one request."""

    id: str
    tier: str
    grants: frozenset[str] = field(default_factory=frozenset)
    transport: str = "stdio"
    peer: bool = False
    max_access: str | None = None  # the member's ceiling (public or team), if it has one
    keep_home: bool = False  # never shown verbatim prompts or instruction notes (homebound)

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
