"""Rewriting a repository's whole history: every commit of every ref replayed with its files and
message transformed, the refs moved in one transaction, the old objects expired and pruned.

A Python replay (not ``git filter-repo``, which may not be installed): commits in topological
order, each tree rewritten once (cached by id), each blob once, written as loose objects; the
final ``git gc --prune=now`` packs what is left. Commit ids change, so a message that names an
earlier commit (a ``Bourdon-Restores`` or ``Bourdon-Theirs`` trailer) is given its new id.

Until ``move_refs`` nothing a reader sees has changed (new objects only); the refs then move in
one ``git update-ref --stdin`` transaction, all or none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bourdon.errors import GitError
from bourdon.store.git import objects
from bourdon.store.git.process import run_git, run_plain
from bourdon.store.git.repo import GitRepo

# (path of the file, its bytes) -> its new bytes.
BlobChange = Callable[[str, bytes], bytes]
# The message, given the new ids of the commits rewritten so far -> the new message.
MessageChange = Callable[[str], str]
# Refs that are only another machine's view (fetched remotes): dropped, not rewritten.
DROPPED = ("refs/remotes/", "refs/stash", "refs/original/")
_OID = re.compile(r"\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b")


@dataclass
class Rewritten:
    """What a rewrite did: old commit -> new, refs moved or dropped, files changed."""

    commits: dict[str, str] = field(default_factory=dict)
    refs: dict[str, str | None] = field(default_factory=dict)
    changed_commits: int = 0
    changed_files: set[str] = field(default_factory=set)


def refs_of(root: Path) -> dict[str, str]:
    """``ref -> object id`` of every ref of the repository."""
    out = run_git(root, "for-each-ref", "--format=%(objectname) %(refname)").decode()
    pairs = (line.split(" ", 1) for line in out.splitlines() if line.strip())
    return {ref: oid for oid, ref in pairs}


class HistoryRewrite:
    """One rewrite of ``repo``: ``run()`` writes the new objects, ``move_refs()`` commits it."""

    def __init__(
        self,
        repo: GitRepo,
        blob: BlobChange,
        message: Callable[[str, Mapping[str, str]], str],
        name: Callable[[bytes], bytes] = lambda n: n,
    ) -> None:
        self.repo = repo
        self._blob = blob
        self._message = message
        self._name = name
        self._blobs: dict[tuple[str, str], str] = {}
        self._trees: dict[tuple[str, str], str] = {}
        self._oid_len = 32 if repo.object_format == "sha256" else 20
        self.done = Rewritten()

    def run(self, write: bool = True) -> Rewritten:
        """Replay every commit reachable from a ref; ``write=False`` only counts (dry run)."""
        self._write = write
        root = self.repo.root
        current = refs_of(root)
        kept = [r for r in current if not r.startswith(DROPPED)]
        if not kept:
            return self.done
        listed = run_git(root, "rev-list", "--topo-order", "--reverse", *kept).decode().split()
        for commit in listed:
            self._commit(commit)
        for ref, oid in current.items():
            if ref.startswith(DROPPED):
                self.done.refs[ref] = None
                continue
            new = self._object(oid)
            if new != oid:
                self.done.refs[ref] = new
        return self.done

    def move_refs(self) -> None:
        """Move (or delete) every ref in one transaction; HEAD's branch included."""
        old = refs_of(self.repo.root)
        lines = []
        for ref, new in sorted(self.done.refs.items()):
            was = old.get(ref)
            if was is None:
                continue
            lines.append(f"delete {ref} {was}" if new is None else f"update {ref} {new} {was}")
        if lines:
            feed = ("start\n" + "\n".join(lines) + "\nprepare\ncommit\n").encode()
            run_git(self.repo.root, "update-ref", "--stdin", stdin=feed)

    def _object(self, oid: str) -> str:
        found = self.repo.read(oid)
        if found is None:
            raise GitError(f"object {oid} is missing: run 'git fsck' on the library")
        if found[1] == "commit":
            return self.done.commits.get(oid, oid)
        if found[1] == "tag":
            return self._tag(found[2])
        return oid

    def _tag(self, body: bytes) -> str:
        head, _, text = body.partition(b"\n\n")
        lines = [ln for ln in head.split(b"\n")]
        target = lines[0].split(b" ", 1)[1].decode()
        lines[0] = b"object " + self._object(target).encode()
        text = self._message(text.decode("utf-8", "replace"), self.done.commits).encode()
        cut = text.find(b"-----BEGIN PGP SIGNATURE-----")  # a signature no longer holds
        return self._put(b"tag", b"\n".join(lines) + b"\n\n" + (text[:cut] if cut >= 0 else text))

    def _commit(self, oid: str) -> None:
        found = self.repo.read(oid)
        assert found is not None and found[1] == "commit"
        head, _, text = found[2].partition(b"\n\n")
        lines, out, skipping = head.split(b"\n"), [], False
        for line in lines:
            if skipping and line.startswith(b" "):
                continue  # a signature's continuation lines
            skipping = False
            key, _, value = line.partition(b" ")
            if key in (b"gpgsig", b"gpgsig-sha256", b"mergetag"):
                skipping = True  # the new commit is not what was signed
            elif key == b"tree":
                out.append(b"tree " + self._tree(value.decode(), "").encode())
            elif key == b"parent":
                out.append(
                    b"parent " + self.done.commits.get(value.decode(), value.decode()).encode()
                )
            elif key in (b"author", b"committer"):
                out.append(key + b" " + self._name(value))
            else:
                out.append(line)
        message = self._message(text.decode("utf-8", "surrogateescape"), self.done.commits)
        body = b"\n".join(out) + b"\n\n" + message.encode("utf-8", "surrogateescape")
        new = self._put(b"commit", body)
        self.done.commits[oid] = new
        if new != oid:
            self.done.changed_commits += 1

    def _tree(self, oid: str, prefix: str) -> str:
        key = (oid, prefix)
        if key in self._trees:
            return self._trees[key]
        found = self.repo.read(oid)
        assert found is not None and found[1] == "tree"
        entries = objects.parse_tree(found[2], self._oid_len)
        new_entries = {}
        for name, (mode, child) in entries.items():
            path = f"{prefix}{name.decode('utf-8', 'surrogateescape')}"
            if mode == objects.DIR_MODE:
                child = self._tree(child, path + "/")
            elif mode != b"160000":
                child = self._file(child, path)
            new_entries[self._name(name)] = (mode, child)
        body = b"".join(
            mode + b" " + name + b"\0" + bytes.fromhex(child)
            for name, (mode, child) in sorted(
                new_entries.items(),
                key=lambda e: e[0] + b"/" if e[1][0] == objects.DIR_MODE else e[0],
            )
        )
        new = self._put(b"tree", body) if body != found[2] else oid
        self._trees[key] = new
        return new

    def _file(self, oid: str, path: str) -> str:
        key = (oid, path.rsplit("/", 1)[-1])
        if key in self._blobs:
            return self._blobs[key]
        found = self.repo.read(oid)
        assert found is not None
        data = self._blob(path, found[2])
        new = oid if data == found[2] else self._put(b"blob", data)
        if new != oid:
            self.done.changed_files.add(path)
        self._blobs[key] = new
        return new

    def _put(self, kind: bytes, body: bytes) -> str:
        if not self._write:
            raw = kind + b" " + str(len(body)).encode() + b"\0" + body
            return objects.object_id(self.repo.object_format, raw)
        return self.repo.write_object(kind, body)


def map_ids(text: str, commits: Mapping[str, str]) -> str:
    """``text`` with every full commit id that was rewritten replaced by its new id."""
    return _OID.sub(lambda m: commits.get(m.group(0), m.group(0)), text)


def expire_and_prune(root: Path) -> None:
    """Drop every reflog entry and every object no ref reaches any more (``gc --prune=now``)."""
    for name in ("ORIG_HEAD", "FETCH_HEAD"):
        git_dir = Path(run_git(root, "rev-parse", "--absolute-git-dir").decode().strip())
        (git_dir / name).unlink(missing_ok=True)
    run_git(root, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    run_git(root, "gc", "--prune=now", "--quiet")


def fsck_clean(root: Path) -> tuple[bool, str]:
    code, said = run_plain(root, "fsck", "--full", "--no-progress")
    return code == 0, said.decode("utf-8", "replace").strip()


def refresh_worktree(root: Path, branch: str) -> None:
    """The index and the tracked files set to the branch's (after its commit was replaced)."""
    run_git(root, "read-tree", "-u", "--reset", branch)


def prune_local(path: str) -> bool:
    """Expire and prune a repository on this machine (a remote given as a path); ``False``
    when ``path`` is not one."""
    target = Path(path)
    if not target.is_dir():
        return False
    run_git(target, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    run_git(target, "gc", "--prune=now", "--quiet")
    return True
