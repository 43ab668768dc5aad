"""Back-off: a peer that failed is skipped for a while, so a dead peer costs its deadline once
per window, not on every call.

A peer that timed out or failed at the transport (refused, reset, a bad HTTP status, an answer
over the size cap, a stream closed before the answer) is skipped for ``Backoff.window(n)``
seconds after its ``n``-th failure in a row: ``base`` doubled each time, at most ``cap``. Once
the window has passed, one call asks it again (the probe) while every other call still skips
it; the first answer resets it. A peer that answers with an error is alive: no back-off.

The state is this process's, in memory, behind one lock (calls may come from several tasks
and threads); the clock is injected so tests move time without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

DEFAULT_BASE: Final = 1.0  # seconds: a peer that restarts is asked again within a second or two
DEFAULT_CAP: Final = 60.0  # seconds: a dead peer costs one deadline a minute, and is back soon


@dataclass(frozen=True)
class Backoff:
    """How long a failed peer is skipped: ``base`` s after one failure, doubled after each
    further one, at most ``cap`` s. ``base`` 0 turns back-off off (every call asks every
    peer). ``clock`` is monotonic seconds."""

    base: float = DEFAULT_BASE
    cap: float = DEFAULT_CAP
    clock: Callable[[], float] = time.monotonic

    def window(self, failures: int) -> float:
        if self.base <= 0 or failures <= 0:
            return 0.0
        return float(min(self.cap, self.base * 2 ** min(failures - 1, 64)))


@dataclass
class _State:
    failures: int = 0  # in a row
    problem: str = ""  # the last one's kind, no value the peer sent
    retry_at: float = 0.0  # clock value after which one call may ask again
    probing: bool = False  # a call is asking it now: the others skip it


@dataclass(frozen=True)
class Ticket:
    """Leave to ask a peer: ``failures`` as they stood when it was given."""

    peer: str
    failures: int
    probe: bool


@dataclass
class PeerBackoff:
    """The back-off state of every peer of one server process."""

    policy: Backoff = field(default_factory=Backoff)
    _states: dict[str, _State] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, peer: str) -> Ticket | str:
        """A ticket to ask ``peer`` now, or why it is skipped (a sentence, no peer value)."""
        now = self.policy.clock()
        with self._lock:
            state = self._states.get(peer)
            if state is None or state.failures == 0 or self.policy.base <= 0:
                return Ticket(peer, 0, probe=False)
            if state.probing:
                return f"skipped: {_history(state)}; another call is trying it now"
            if now < state.retry_at:
                wait = max(1, math.ceil(state.retry_at - now))
                return f"skipped: {_history(state)}; next try in {wait} s"
            state.probing = True
            return Ticket(peer, state.failures, probe=True)

    def succeeded(self, ticket: Ticket) -> None:
        with self._lock:
            self._states.pop(ticket.peer, None)

    def failed(self, ticket: Ticket, problem: str) -> None:
        """Count a failure, once for all the calls that were asked at the same count (calls
        that ran together and all timed out are one failure, not many)."""
        if self.policy.base <= 0:
            return  # back-off off: nothing to remember
        now = self.policy.clock()
        with self._lock:
            state = self._states.setdefault(ticket.peer, _State())
            if ticket.probe:
                state.probing = False
            if state.failures != ticket.failures:
                return  # another call of the same round counted it already
            state.failures += 1
            state.problem = problem
            state.retry_at = now + self.policy.window(state.failures)

    def released(self, ticket: Ticket) -> None:
        """The call ended with no verdict (it was cancelled): the next call may try."""
        if not ticket.probe:
            return
        with self._lock:
            state = self._states.get(ticket.peer)
            if state is not None:
                state.probing = False

    def report(self, peer: str) -> dict[str, Any] | None:
        """``peer``'s back-off as memory_status shows it, or None when it is not backed off."""
        now = self.policy.clock()
        with self._lock:
            state = self._states.get(peer)
            if state is None or state.failures == 0:
                return None
            return {
                "failures": state.failures,
                "problem": state.problem,
                "next_try_in_s": round(max(0.0, state.retry_at - now), 1),
                "probing": state.probing,
            }


def _history(state: _State) -> str:
    times = "once" if state.failures == 1 else f"{state.failures} times in a row"
    return f"{state.problem} {times}"
