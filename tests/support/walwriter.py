"""A SQLite writer in another process holding a database open in WAL mode, uncheckpointed: the
state an agent leaves its store in while it runs. Another process, because connections of one
process share the ``-shm`` file, so a writer inside the test would hide what a reader changes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

WRITER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=wal")
conn.execute("PRAGMA wal_autocheckpoint=0")
for statement in sys.argv[2:]:
    conn.execute(statement)
print("ready", flush=True)
sys.stdin.read()  # hold the database open until the test is done
conn.close()
"""


@contextmanager
def held_open(db: Path, statements: Sequence[str]) -> Iterator[None]:
    """Run ``statements`` on ``db`` from another process and keep it open until the block ends."""
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), *statements],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        yield
    finally:
        assert writer.stdin is not None
        writer.stdin.close()
        try:
            writer.wait(timeout=10)
        finally:
            if writer.poll() is None:
                writer.kill()
            if writer.stdout is not None:
                writer.stdout.close()
