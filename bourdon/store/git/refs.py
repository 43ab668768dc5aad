"""Reading refs and moving the branch, in-process, the way git itself does.

No git process: a ref is read on every write and every freshness check, and the branch moves
on every commit; a git process would cost a few milliseconds each time.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from bourdon.errors import GitError
from bourdon.store.durable import fsync_dir


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The id a full ref name (``refs/...``) holds, read from its file or ``packed-refs``."""
    try:
        return (git_dir / ref).read_text(encoding="ascii").strip() or None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnicodeDecodeError):
        pass
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        oid, _, name = line.partition(" ")
        if name == ref:
            return oid
    return None


def move_branch(
    git_dir: Path, branch: str, old: str | None, new: str, *, who: str, when: int, reason: str
) -> None:
    """``git update-ref <branch> <new> <old>``, done the way git does it, in-process.

    Git's own protocol: create ``<ref>.lock`` exclusively (a git process updating the ref
    at the same moment fails instead of racing), check the ref still holds ``old``, write
    and fsync the new id, rename the lock over the ref, fsync the folder, then append the
    reflog lines, naming ``who`` moved it, ``when`` and why (``reason``).

    Not ``durable.atomic_write``: here the temp file *is* git's lock on the ref, so it must have
    git's name and be created exclusively, and the compare-and-swap happens while it is held.
    """
    ref = git_dir / branch
    lock = ref.with_name(ref.name + ".lock")
    ref.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise GitError(
            f"{lock.name} exists: another git process is updating the branch; try again"
        ) from None
    try:
        try:
            if (read_ref(git_dir, branch) or None) != old:
                raise GitError(
                    "the branch moved while this commit was being written "
                    "(compare-and-swap failed); nothing was changed"
                )
            os.write(fd, new.encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(lock, ref)
    except BaseException:
        with contextlib.suppress(OSError):
            lock.unlink()
        raise
    fsync_dir(ref.parent)
    zero = "0" * len(new)  # the reflog's "no commit before", as long as an id of this format
    line = f"{old or zero} {new} {who} {when} +0000\t{reason}\n".encode()
    for log in (git_dir / "logs" / branch, git_dir / "logs" / "HEAD"):
        with contextlib.suppress(OSError):
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "ab") as handle:
                handle.write(line)
