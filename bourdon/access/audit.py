"""The audit log: one JSON line per tool or resource call, allowed or denied.

``$BOURDON_HOME/audit.jsonl``. Each record: ``time``, ``caller``, ``tier``, ``transport``,
``op``, ``namespace``, ``decision`` (``allow`` / ``deny``), ``status`` and ``detail``. Records
never hold token material: callers are named by member id.

Several processes append at once. Each record is one ``write`` on a file opened with
``O_APPEND``, so records never interleave; a writer killed mid-record leaves a torn last line,
so the next writer starts with a newline when the file does not end with one, and the reader
skips any line that is not a whole JSON object.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

AUDIT_FILE: Final = "audit.jsonl"
MAX_DETAIL: Final = 300


@dataclass(frozen=True)
class AuditRecord:
    time: str
    caller: str
    tier: str
    transport: str
    op: str
    namespace: str | None
    decision: str
    status: int
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AuditLog:
    """Append-only JSON lines, safe for several writers."""

    def __init__(self, home: Path) -> None:
        self.path = home / AUDIT_FILE

    def append(
        self,
        *,
        caller: str,
        tier: str,
        transport: str,
        op: str,
        namespace: str | None,
        decision: str,
        status: int,
        detail: str = "",
    ) -> None:
        record = AuditRecord(
            datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            _scrub(caller),
            tier,
            transport,
            _scrub(op)[:200],
            _scrub(namespace) if namespace else None,
            decision,
            status,
            _scrub(" ".join(detail.split())[:MAX_DETAIL]),
        )
        line = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))
        fd = self._open()
        try:
            # Checking the last byte and appending must be one step among writers, or two of
            # them each add a separating newline. flock dies with its process: never stale.
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = (line + "\n").encode("utf-8")
            if not _ends_with_newline(fd):
                data = b"\n" + data  # never glue a record to a torn one
            os.write(fd, data)
        finally:
            os.close(fd)

    def _open(self) -> int:
        """The log for appending; its folder is made only when missing (not on every call)."""
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
        try:
            return os.open(self.path, flags, 0o600)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            return os.open(self.path, flags, 0o600)

    def records(self) -> Iterator[AuditRecord]:
        """Every whole record, oldest first; torn or foreign lines are skipped."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    continue  # a torn last line, or one still being written
                try:
                    data = json.loads(raw)
                    yield AuditRecord(**data)
                except (ValueError, TypeError):
                    continue

    def query(
        self, *, agent: str | None = None, denials: bool = False, limit: int = 50
    ) -> list[AuditRecord]:
        """The newest ``limit`` records, optionally of one namespace or denials only."""
        kept = [
            r
            for r in self.records()
            if (agent is None or r.namespace == agent) and (not denials or r.decision == "deny")
        ]
        return kept[-limit:] if limit > 0 else []


_TOKEN_LIKE = re.compile(r"(?i)bdn(_|%5f)[0-9a-f%]{8,}")


def _scrub(text: str) -> str:
    """No token material in the log, even when a caller puts one where it does not belong."""
    return _TOKEN_LIKE.sub("bdn_[redacted]", text)


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def scrub_file(home: Path, replace: Callable[[str], str]) -> int:
    """Rewrite ``audit.jsonl`` with ``replace`` applied to each line (a purge); lines changed.

    Written whole to a temp file and renamed over the log, so a crash leaves one or the other.
    """
    path = home / AUDIT_FILE
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except FileNotFoundError:
        return 0
    new = [replace(line) for line in lines]
    changed = sum(a != b for a, b in zip(lines, new, strict=True))
    if changed:
        temp = path.with_name(path.name + ".purging")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("".join(new))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    return changed
