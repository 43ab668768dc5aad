"""The library's write lock: one writer at a time, across threads and processes.

Whoever takes the lock first reconciles what a crashed writer left (``recovery``), so every
write starts from a library whose files equal HEAD.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import filelock

from bourdon.errors import BusyError
from bourdon.store.recovery import Recovery


class WriteLock:
    """``held()`` is the critical section of every write; ``recovered`` says what recovery did."""

    def __init__(self, local: Path, timeout: float, recovery: Recovery) -> None:
        self.timeout = timeout
        self.recovery = recovery
        self.recovered: list[str] = []
        self._pid_file = local / "write.pid"
        self._file = filelock.FileLock(str(local / "write.lock"), thread_local=False)
        self._thread = threading.RLock()

    @contextlib.contextmanager
    def held(self, reconciling: bool = False) -> Iterator[None]:
        """Hold the lock; raise ``BusyError`` after ``timeout`` seconds of waiting."""
        with self._thread:
            try:
                # Poll often: filelock retries a busy lock on an interval, and a long one lets
                # a writer that just released the lock take it straight back.
                self._file.acquire(timeout=self.timeout, poll_interval=0.002)
            except filelock.Timeout:
                holder = _read_pid(self._pid_file)
                raise BusyError(
                    f"the library is busy: another bourdon process{holder} has held the write "
                    f"lock for over {self.timeout:g} s; try again"
                ) from None
            try:
                crashed = self._pid_file.exists()  # its holder never got to remove it
                self._pid_file.write_text(str(os.getpid()), encoding="ascii")
                if not reconciling and self.recovery.needed(crashed):
                    self.recovered += self.recovery.run()
                yield
            finally:
                with contextlib.suppress(OSError):
                    self._pid_file.unlink()
                self._file.release()


def _read_pid(path: Path) -> str:
    try:
        return f" (pid {int(path.read_text(encoding='ascii'))})"
    except (OSError, ValueError):
        return ""
