"""Work the server does ahead of need, once it has nothing to answer.

Turn-start recognition is built ahead (``create_server``) so the first prompt of a session
does not pay for it, and a cold start writes the cache entries of the manifests it parsed.
Done in a thread at start-up, that work shared the interpreter with the first calls and
delayed their answers; an ``IdleWarmup`` instead starts it when no request has been in flight
for ``quiet`` seconds, which comes right after the client's opening calls and long before a
person types the first prompt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

QUIET = 0.05  # seconds without a request before warming up


class IdleWarmup:
    """A server middleware that runs ``task`` once, in a thread, when the server is idle."""

    def __init__(self, task: Callable[[], object], quiet: float = QUIET) -> None:
        self._task = task
        self._quiet = quiet
        self._busy = 0
        self._last = time.monotonic()
        self._changed = threading.Event()
        self._started = False

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        self._busy += 1
        try:
            return await call_next(ctx)
        finally:
            self._busy -= 1
            self._last = time.monotonic()
            self._changed.set()

    def start(self) -> None:
        """Begin watching for idleness (once; later calls do nothing)."""
        if not self._started:
            self._started = True
            self._last = time.monotonic()  # quiet from now on: the opening calls are on their way
            threading.Thread(target=self._run, name="bourdon-warmup", daemon=True).start()

    def _run(self) -> None:
        while True:
            self._changed.clear()  # before reading: a request ending after the read wakes us
            busy, idle = self._busy, time.monotonic() - self._last
            if busy == 0 and idle >= self._quiet:
                break
            # Woken by the end of a request, or when the quiet period would be over.
            self._changed.wait(self._quiet - idle if busy == 0 else None)
        self._task()
