"""Many commits at once through one ``git fast-import`` (adopting a library's whole history).

One git process writes them all into a pack, where writing loose objects would cost an fsync
per object. Each commit keeps its own time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ImportedCommit:
    """One commit for ``GitRepo.import_commits``: its changes (``None`` deletes), its time."""

    changes: Mapping[str, bytes | None]
    message: str
    author: str
    committer: str
    when: int  # seconds since the epoch, UTC


class ImportStream:
    """The fast-import input for a line of commits on ``ref``, the first on top of ``parent``.

    Iterate it once; ``count`` then says how many commits it held.
    """

    def __init__(self, commits: Iterable[ImportedCommit], ref: str, parent: str | None) -> None:
        self.commits = commits
        self.ref = ref
        self.parent = parent
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        yield b"feature done\n"
        for count, each in enumerate(self.commits, start=1):
            self.count = count
            message = each.message.rstrip("\n").encode("utf-8") + b"\n"
            yield (
                f"commit {self.ref}\nmark :{count}\n"
                f"author {each.author} {each.when} +0000\n"
                f"committer {each.committer} {each.when} +0000\n"
                f"data {len(message)}\n"
            ).encode() + message
            if count == 1 and self.parent:
                yield f"from {self.parent}\n".encode("ascii")
            for path, data in each.changes.items():
                quoted = _path(path)
                if data is None:
                    yield b"D " + quoted + b"\n"
                else:
                    yield b"M 100644 inline " + quoted + b"\n"
                    yield f"data {len(data)}\n".encode("ascii") + data + b"\n"
            yield b"\n"
        yield b"done\n"


def _path(path: str) -> bytes:
    """A path as fast-import reads it: quoted C-style when it has a quote, space or newline."""
    if not any(c in path for c in '"\\\n ') and not path.startswith('"'):
        return path.encode("utf-8")
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return b'"' + escaped.encode("utf-8") + b'"'
