"""``GitRepo``: one git repository as the store sees it: object reads, commits, history, refs,
remotes and upkeep. The git mechanics live beside it (``process``, ``objects``, ``refs``,
``fastimport``); this class ties them to one repository.

Size: one class is the repository as the store sees it (reads, writes, refs, remotes, the
index, upkeep), each method a few lines over the mechanism modules beside it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from bourdon.errors import GitError, LibraryError, NotFoundError
from bourdon.store.git import index, locks, objects, refs
from bourdon.store.git.fastimport import ImportedCommit, ImportStream
from bourdon.store.git.packing import Packer, StoreState
from bourdon.store.git.process import CatFile, run_git, run_plain, stream_git


@dataclass(frozen=True)
class LogEntry:
    """One commit as history shows it."""

    commit: str
    parents: tuple[str, ...]
    time: int
    message: str


class GitRepo:
    """One git repository: object reads, object writes, branch updates, history."""

    def __init__(self, root: Path) -> None:
        self.root = root
        out = run_git(root, "rev-parse", "--git-dir", "--show-object-format").decode().split("\n")
        git_dir = Path(out[0])
        self.git_dir = git_dir if git_dir.is_absolute() else root / git_dir
        self.object_format = out[1].strip() or "sha1"
        ref = run_git(root, "symbolic-ref", "-q", "HEAD", check=False).decode().strip()
        if not ref:
            raise LibraryError(
                f"{root}: HEAD is detached; run 'git -C {root} checkout main' and try again"
            )
        self.branch = ref
        self._oid_bytes = 32 if self.object_format == "sha256" else 20
        self._cat = CatFile(root)
        self._objects = objects.LooseObjects(self.git_dir, self.object_format, self.tree_entries)
        self.packer = Packer(root, self.git_dir, 2 * self._oid_bytes)
        self.index_current = True  # False once an index update was skipped: read-tree is due

    @classmethod
    def init(cls, root: Path, branch: str = "main") -> GitRepo:
        """Create a repository at ``root`` (which must exist) and open it."""
        run_git(root, "init", "-q", "-b", branch)
        return cls(root)

    # -- reading -------------------------------------------------------------------------

    def head(self) -> str | None:
        """The commit the branch points at, or ``None`` before the first commit.

        Read from the ref file (or ``packed-refs``) directly: this runs on every write and
        every freshness check, and a git process would cost a few milliseconds each time.
        """
        return self.read_ref(self.branch)

    def read_ref(self, ref: str) -> str | None:
        """The id a full ref name (``refs/...``) holds."""
        return refs.read_ref(self.git_dir, ref)

    def blob_id(self, data: bytes) -> str:
        """The id git gives a blob of ``data`` (without writing it)."""
        return objects.blob_id(self.object_format, data)

    def read(self, spec: str) -> tuple[str, str, bytes] | None:
        """Read one object by any name git accepts (``<commit>:<path>``); ``None`` if absent."""
        return self._cat.read(spec)

    def read_blob(self, commit: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, or ``None`` if it was not there."""
        found = self.read(f"{commit}:{path}")
        return found[2] if found and found[1] == "blob" else None

    def object_id(self, commit: str, path: str) -> str | None:
        """The id of the file at ``path`` in ``commit``, read from its folder's tree.

        Cheap next to reading the file: the folder's tree is a few hundred bytes, the file may
        be hundreds of kilobytes, and the id is all a cache lookup needs.
        """
        folder, _, name = path.rpartition("/")
        found = self.read(f"{commit}:{folder}" if folder else f"{commit}^{{tree}}")
        if not found or found[1] != "tree":
            return None
        entry = objects.parse_tree(found[2], self._oid_bytes).get(name.encode("utf-8"))
        return entry[1] if entry and entry[0] != objects.DIR_MODE else None

    def sizes(self, specs: list[str]) -> list[int | None]:
        """The byte size of each object (``<commit>:<path>``), ``None`` where it is absent.

        One ``cat-file --batch-check`` for all of them: a version list wants twenty sizes, and
        reading twenty manifests of hundreds of kilobytes to learn them costs ten times more.
        """
        if not specs:
            return []
        if any("\n" in spec for spec in specs):
            raise ValueError("object names cannot contain a newline")
        out = run_git(
            self.root,
            "cat-file",
            "--batch-check=%(objecttype) %(objectsize)",
            stdin="".join(f"{spec}\n" for spec in specs).encode("utf-8"),
        )
        sizes: list[int | None] = []
        for line in out.decode("utf-8", "replace").splitlines():
            kind, _, size = line.rpartition(" ")
            sizes.append(int(size) if kind == "blob" and size.isdigit() else None)
        return sizes

    def tree_entries(self, tree: str | None) -> dict[bytes, tuple[bytes, str]]:
        """``name -> (mode, object id)`` of a tree; empty for ``None``."""
        if tree is None:
            return {}
        found = self.read(tree)
        if not found or found[1] != "tree":
            raise NotFoundError(f"no tree {tree}")
        return objects.parse_tree(found[2], self._oid_bytes)

    def list_files(self, commit: str, directory: str) -> list[str]:
        """Paths of the files below ``directory`` at ``commit``, sorted."""
        found = self.read(f"{commit}:{directory}")
        if not found or found[1] != "tree":
            return []
        out: list[str] = []
        stack = [(directory, found[0])]
        while stack:
            prefix, tree = stack.pop()
            for name, (mode, oid) in self.tree_entries(tree).items():
                path = f"{prefix}/{name.decode('utf-8', 'surrogateescape')}"
                if mode == objects.DIR_MODE:
                    stack.append((path, oid))
                else:
                    out.append(path)
        return sorted(out)

    def log(
        self,
        path: str,
        limit: int | None = None,
        *,
        grep: str | None = None,
        since: str | None = None,
    ) -> list[LogEntry]:
        """Commits that touched ``path``, newest first (only those after ``since``, if given)."""
        # First parent only: a sync's integration commit has the remote's published state as
        # its second parent, and the versions of an agent are this library's own states.
        args = ["log", "--first-parent", "--no-color", "--format=%x1e%H%x1f%P%x1f%ct%x1f%B"]
        if limit is not None:
            args.append(f"-n{int(limit)}")
        if grep:
            args += ["--fixed-strings", f"--grep={grep}"]
        if self.head() is None:
            return []
        revs = f"{since}..{self.branch}" if since else self.branch
        out = run_git(self.root, *args, revs, "--", path).decode("utf-8", "replace")
        entries = []
        for record in out.split("\x1e")[1:]:
            commit, parents, when, message = record.split("\x1f", 3)
            entries.append(LogEntry(commit, tuple(parents.split()), int(when), message.strip()))
        return entries

    def file_ids(self, path: str, *, since: str | None = None) -> dict[str, str | None]:
        """The id of ``path`` each commit that touched it left (``None``: it removed it), in
        one ``git log --raw``, first parent only as ``log`` (only after ``since``, if given)."""
        if self.head() is None:
            return {}
        revs = f"{since}..{self.branch}" if since else self.branch
        out = run_git(
            self.root, "log", "--first-parent", "--raw", "--no-abbrev", "--no-renames",
            "--no-color", "--format=%x1e%H", revs, "--", path,
        ).decode("utf-8", "replace")  # fmt: skip
        found: dict[str, str | None] = {}
        for record in out.split("\x1e")[1:]:
            commit, _, raw = record.partition("\n")
            for line in raw.splitlines():
                fields = line.split("\t", 1)[0].split()
                if line.startswith(":") and len(fields) >= 5:
                    found[commit] = None if set(fields[3]) == {"0"} else fields[3]
        return found

    def changed_files(self, since: str, until: str) -> set[str]:
        """Every path a commit of ``since..until`` changed, first parent only as ``log``."""
        out = run_git(
            self.root, "log", "--first-parent", "--raw", "--no-abbrev", "--no-renames",
            "--no-color", "-z", "--format=", f"{since}..{until}",
        ).decode("utf-8", "surrogateescape")  # fmt: skip
        fields = out.split("\0")  # ":<modes> <ids> <status>", then its path, for each file
        return {path for meta, path in itertools.pairwise(fields) if meta.lstrip().startswith(":")}

    def read_blobs(self, ids: list[str], chunk: int = 200) -> Iterator[tuple[str, bytes]]:
        """(id, bytes) of each blob of ``ids``, in order, read ``chunk`` at a time by one
        ``cat-file --batch`` each (a missing one is left out)."""
        for start in range(0, len(ids), chunk):
            wanted = ids[start : start + chunk]
            out = run_git(
                self.root, "cat-file", "--batch", stdin="".join(f"{i}\n" for i in wanted).encode()
            )
            at = 0
            while at < len(out):
                end = out.index(b"\n", at)
                header = out[at:end].split()
                at = end + 1
                if len(header) != 3 or not header[2].isdigit():
                    continue  # "<id> missing"
                size = int(header[2])
                yield header[0].decode("ascii"), out[at : at + size]
                at += size + 1

    def commit_tree(self, commit: str) -> str:
        found = self.read(f"{commit}^{{tree}}")
        if not found:
            raise NotFoundError(f"no commit {commit}")
        return found[0]

    # -- writing -------------------------------------------------------------------------

    def commit_files(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        *,
        parent: str | None,
        author: str,
        committer: str,
        merged: str | None = None,
        when: int | None = None,
        keep_index: bool = False,
    ) -> str:
        """Commit ``path -> bytes`` (``None`` deletes) on top of ``parent``; return the commit.

        ``keep_index``: git's index is set to the files, which are on disk as committed.

        The branch moves only if it still points at ``parent`` (compare-and-swap); otherwise a
        ``GitError`` says that somebody else moved it. ``merged`` is a second parent: the
        commit whose changes this one integrates. ``when`` dates it (default: now).
        """
        commit, now = self.write_commit(
            changes,
            message,
            parent=parent,
            author=author,
            committer=committer,
            merged=merged,
            when=when,
        )
        if keep_index:
            # Before the branch moves: the index never falls behind HEAD (``index``).
            self.index_current = self.index_current and self.update_index(changes)
        logged = now if when is None else int(time.time())  # the reflog says when it moved
        self._move_branch(parent, commit, committer, logged, message.splitlines()[0][:200])
        return commit

    def write_commit(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        *,
        parent: str | None,
        author: str,
        committer: str,
        merged: str | None = None,
        when: int | None = None,
    ) -> tuple[str, int]:
        """Write a commit object (no ref moves); return it and its time.

        Its tree is ``parent``'s (empty without one) with ``changes`` applied.
        """
        return self._objects.commit(
            self.commit_tree(parent) if parent else None,
            changes,
            message,
            parents=(parent, merged),
            author=author,
            committer=committer,
            when=when,
        )

    def write_object(self, kind: bytes, body: bytes) -> str:
        """Write one object (blob, tree, commit or tag) as it is; return its id."""
        return self._objects.write(kind, body)

    def import_commits(
        self, commits: Iterable[ImportedCommit], *, parent: str | None
    ) -> str | None:
        """Write a line of commits on top of ``parent`` in one ``git fast-import``; move the branch.

        The branch moves by compare-and-swap from ``parent`` to the last commit, the commit
        point of the whole line; returns it (``parent`` if none).
        """
        scratch = "refs/bourdon/importing"
        marks = self.git_dir / "bourdon-import.marks"
        self.delete_ref(scratch)  # a crashed import's leftovers must not become a parent
        stream = ImportStream(commits, scratch, parent)
        try:
            stream_git(
                self.root, stream, "fast-import", "--quiet", "--done", f"--export-marks={marks}"
            )
            if stream.count == 0:
                return parent
            last = self.read_ref(scratch)
            if last is None:
                raise GitError("git fast-import wrote no commit")
            reason = f"import {stream.count} commits"
            self._move_branch(parent, last, "bourdon <bourdon@localhost>", int(time.time()), reason)
            return last
        finally:
            self.delete_ref(scratch)
            with contextlib.suppress(FileNotFoundError):
                marks.unlink()

    def _move_branch(self, old: str | None, new: str, who: str, when: int, reason: str) -> None:
        refs.move_branch(self.git_dir, self.branch, old, new, who=who, when=when, reason=reason)

    # -- refs and remotes ----------------------------------------------------------------

    def set_ref(self, ref: str, commit: str) -> None:
        """Point ``ref`` at ``commit`` (``git update-ref``: locked, logged, fsynced)."""
        run_git(self.root, "update-ref", ref, commit)

    def delete_ref(self, ref: str) -> None:
        run_git(self.root, "update-ref", "-d", ref, check=False)

    def count_commits(self, since: str | None, until: str, path: str | None = None) -> int:
        """Commits on the first-parent line of ``until`` after ``since`` (touching ``path``)."""
        revs = f"{since}..{until}" if since else until
        args = ["rev-list", "--first-parent", "--count", revs]
        out = run_git(self.root, *args, *(["--", path] if path else []), check=False)
        return int(out.decode().strip() or 0)

    def config_get(self, key: str) -> str | None:
        out = run_git(self.root, "config", "--local", "--get", key, check=False)
        return out.decode("utf-8", "replace").strip() or None

    def config_set(self, key: str, value: str | None, *, add: bool = False) -> None:
        """Set (or with ``None`` unset) one key of the repository's own configuration."""
        if value is None:
            run_git(self.root, "config", "--local", "--unset-all", key, check=False)
        else:
            run_git(self.root, "config", "--local", *(["--add"] if add else []), key, value)

    def config_remove_section(self, section: str) -> None:
        run_git(self.root, "config", "--local", "--remove-section", section, check=False)

    def remotes(self) -> dict[str, str]:
        """``name -> url`` of the repository's remotes."""
        out = run_git(
            self.root, "config", "--local", "--get-regexp", r"^remote\..*\.url$", check=False
        ).decode("utf-8", "replace")
        found = {}
        for line in out.splitlines():
            key, _, url = line.partition(" ")
            found[key[len("remote.") : -len(".url")]] = url
        return found

    def fetch(self, remote: str, branch: str, into: str, timeout: float) -> str | None:
        """Fetch one branch of ``remote`` into the local ref ``into``; return its commit.

        ``None`` when the remote has no such branch yet (nothing was ever pushed to it).
        """
        try:
            run_git(
                self.root,
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-auto-gc",
                remote,
                f"+refs/heads/{branch}:{into}",
                network=True,
                timeout=timeout,
            )
        except GitError as exc:
            if "couldn't find remote ref" in str(exc.details.get("stderr") or ""):
                return None
            raise
        return self.read_ref(into)

    def push(
        self, remote: str, commit: str, branch: str, timeout: float, *, force: bool = False
    ) -> bool:
        """Push ``commit`` to ``branch`` of ``remote`` as a fast-forward only (unless ``force``:
        after a purge rewrote the history the remote holds).

        Returns ``False`` when the remote refused because its branch moved on (fetch and
        integrate, then try again); raises ``GitError`` for any other refusal.
        """
        try:
            run_git(
                self.root,
                "push",
                "--quiet",
                "--no-verify",
                remote,
                f"{'+' if force else ''}{commit}:refs/heads/{branch}",
                network=True,
                timeout=timeout,
            )
        except GitError as exc:
            said = str(exc.details.get("stderr") or "")
            if "non-fast-forward" in said or "fetch first" in said or "stale info" in said:
                return False
            why = [
                line.strip()
                for line in said.splitlines()
                if line.startswith("remote:") or "rejected" in line or "fatal:" in line
            ]
            raise GitError(
                f"{remote} refused the push: {'; '.join(why) or exc.message}", stderr=said
            ) from None
        return True

    # -- upkeep --------------------------------------------------------------------------

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Is ``older`` in the history of ``newer``?"""
        return run_plain(self.root, "merge-base", "--is-ancestor", older, newer)[0] == 0

    def sync_index(self) -> None:
        """Make git's own index match HEAD, so ``git status`` in the library reads clean."""
        if self.head() is not None:
            run_git(self.root, "read-tree", self.branch)
        self.index_current = True

    def repair_index(self, under: tuple[str, ...]) -> list[str]:
        """Set the index entries below the folders ``under`` that differ from HEAD to HEAD's;
        return those paths. What someone staged elsewhere is left as it is."""
        stale = [p for p in self.index_differences() or [] if p.startswith(under)]
        if stale:
            self.reset_index(stale)
        self.index_current = True
        return stale

    def reset_index(self, paths: list[str]) -> None:
        """Set the index entries of ``paths`` to HEAD's (removed where HEAD has none)."""
        head = self.head()
        tree = self.commit_tree(head) if head is not None else None
        files = index.tree_files(self.tree_entries, tree)
        zero = "0" * (2 * self._oid_bytes)
        lines = [f"100644 {files[p]}\t{p}" if p in files else f"0 {zero}\t{p}" for p in paths]
        run_git(self.root, "update-index", "--index-info", stdin="\n".join(lines).encode() + b"\n")

    def update_index(self, changes: Mapping[str, bytes | None]) -> bool:
        """Set the index entries of files just written (``None``: removed); ``False`` if not
        now (git holds the index, or it is of a kind only git rewrites)."""
        ids = {p: None if data is None else self.blob_id(data) for p, data in changes.items()}
        try:
            return index.update(self.git_dir, self.root, self._oid_bytes, ids)
        except OSError:
            return False

    def index_differences(self) -> list[str] | None:
        """Paths where git's index differs from HEAD; ``None`` if the index cannot be read."""
        head = self.head()
        tree = self.commit_tree(head) if head is not None else None
        files = index.tree_files(self.tree_entries, tree)
        return index.differences(self.git_dir, self._oid_bytes, files)

    def stale_locks(self, *, objects: bool = True) -> Iterator[Path]:
        """Lock and temp files a killed git (or bourdon) process may have left (``objects``:
        the temp objects too, one listing per fan-out folder)."""
        for name in ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock"):
            if (self.git_dir / name).exists():
                yield self.git_dir / name
        for folder in ("refs", "logs"):
            yield from (self.git_dir / folder).rglob("*.lock")
        if objects:
            yield from self._temp_objects()

    def _temp_objects(self) -> Iterator[Path]:
        """``tmp_obj_*`` in the fan-out folders, each of which a pack run may remove meanwhile
        (``packing``: it removes a folder it emptied), which is no error here."""
        store = self.git_dir / "objects"
        try:
            folders = [e.name for e in os.scandir(store) if len(e.name) == 2]
        except OSError:
            return
        for folder in folders:
            try:
                names = [e.name for e in os.scandir(store / folder)]
            except OSError:
                continue
            yield from (store / folder / n for n in names if n.startswith("tmp_obj_"))

    def pack_if_due(self) -> bool:
        """After a write: pack the loose objects in the background if git would (``packing``)."""
        return self.packer.start_if_due()

    def object_store(self) -> StoreState:
        """Loose objects (estimated), packs, when last packed: a few stats."""
        return self.packer.state()

    def git_users(self) -> list[int] | None:
        """Live git processes that may write here (``[]``: none; ``None``: cannot tell)."""
        return locks.git_users(self.root, self.git_dir)

    def fsck(self) -> tuple[bool, str]:
        """``git fsck --full --strict``: (clean, what git said)."""
        code, said = run_plain(self.root, "fsck", "--full", "--strict", "--no-progress")
        return code == 0, said.decode("utf-8", "replace").strip()

    def close(self) -> None:
        self._cat.close()

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
