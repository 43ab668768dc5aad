"""Who is logged in to the web view: one-time login codes and session cookies, in memory.

A login code is printed by ``bourdon ui`` for the local operator and works once, for a few
minutes; it is hex, so it never looks like a member token (the door refuses ``bdn_`` in a
URL). A member logs in with its token in a form body and gets a session bound to that token's
digest: rotating or revoking the member ends the session on its next request. Sessions live in
the server's memory only; a restart logs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from bourdon.access.callers import Caller

COOKIE: Final = "bourdon_session"
LOGIN_TTL: Final = 600.0  # seconds a printed login link stays valid
SESSION_TTL: Final = 12 * 3600.0  # seconds a session lasts without being used
MAX_SESSIONS: Final = 1024  # the oldest is dropped past this


@dataclass
class Session:
    id: str
    caller: Caller
    csrf: str
    expires: float
    token_sha256: str | None = None  # a member's session: the token it logged in with


class Sessions:
    """Login codes and sessions; ``clock`` is injectable for the tests of expiry."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._codes: dict[str, float] = {}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def login_code(self) -> str:
        """A one-time code that opens an operator session (``/ui/login/<code>``)."""
        code = secrets.token_hex(24)
        with self._lock:
            self._codes[code] = self._clock() + LOGIN_TTL
        return code

    def redeem(self, code: str) -> Session | None:
        """The operator's new session for ``code``, which then stops working; ``None`` for a
        code that is unknown, spent or expired."""
        with self._lock:
            now = self._clock()
            match = next((c for c in self._codes if hmac.compare_digest(c, code)), None)
            if match is None:
                return None
            expires = self._codes.pop(match)
            if expires < now:
                return None
        return self.open(Caller.operator())

    def open(self, caller: Caller, token_sha256: str | None = None) -> Session:
        session = Session(
            id=secrets.token_urlsafe(32),
            caller=caller,
            csrf=secrets.token_urlsafe(32),
            expires=self._clock() + SESSION_TTL,
            token_sha256=token_sha256,
        )
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                del self._sessions[min(self._sessions, key=lambda k: self._sessions[k].expires)]
            self._sessions[session.id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of a cookie's value, its clock restarted; ``None`` otherwise."""
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            now = self._clock()
            if session.expires < now:
                del self._sessions[session_id]
                return None
            session.expires = now + SESSION_TTL
            return session

    def close(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
