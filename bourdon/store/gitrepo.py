"""The only code in bourdon that touches git.

Every git process runs with a scrubbed environment: no inherited ``GIT_*`` variables, no system
or global configuration, repository hooks and fsmonitor disabled, and ``core.fsync=all`` so an
acknowledged commit survives a power cut on honest storage.

A commit never goes through git's shared index (the first cause of ``index.lock`` failures in
git-backed tools). bourdon writes the blob, tree and commit objects itself, as loose objects
(zlib + fsync, the format git documents), and then moves the branch with
a compare-and-swap on the branch ref (git's lock-file protocol, in-process): that ref update is
the commit point.
Writing the objects in-process takes about a millisecond where ``git commit`` takes 15-25 ms.

Objects are read through one long-lived ``git cat-file --batch`` process (well under a
millisecond per read), guarded by a lock because callers may be on several threads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from bourdon.errors import GitError, LibraryError, NotFoundError
from bourdon.store.durable import atomic_write, fsync_dir

_CONFIG: Final = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.fsync=all",
    "core.fsyncMethod=fsync",
    "gc.auto=0",
    "commit.gpgSign=false",
    "safe.directory=*",
)
_DIR_MODE: Final = b"40000"
_FILE_MODE: Final = b"100644"


def git_env() -> dict[str, str]:
    """The environment git runs in: the caller's, minus every ``GIT_*`` variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def run_git(
    cwd: Path,
    *args: str,
    stdin: bytes | None = None,
    check: bool = True,
    network: bool = False,
    user_config: bool = False,
    timeout: float | None = None,
) -> bytes:
    """Run one git command in ``cwd``; return stdout or raise ``GitError`` with git's words.

    ``user_config`` commands read the user's global git configuration too (where the identity,
    credential helpers, ssh settings and ``insteadOf`` rewrites live); ``network`` commands
    (fetch, push) do, and they also run in a session of
    their own, without a terminal, so neither git nor ssh can ever prompt (a passphrase or an
    unknown host key fails instead), and give up after ``timeout`` seconds.
    """
    command = ["git", *(part for item in _CONFIG for part in ("-c", item)), *args]
    env = git_env()
    if network or user_config:
        del env["GIT_CONFIG_GLOBAL"]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            check=False,
            timeout=timeout,
            start_new_session=network,
        )
    except FileNotFoundError:
        raise LibraryError("bourdon needs git on PATH; install git and try again") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} gave no answer within {timeout:g} s") from None
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}",
            stderr=done.stderr.decode("utf-8", "replace"),
        )
    return done.stdout


def stream_git(cwd: Path, chunks: Iterable[bytes], *args: str) -> None:
    """Run one git command that reads a long input, fed chunk by chunk (never all in memory).

    git's stderr goes to a temp file, not a pipe, so a chatty git can never block the feed.
    """
    command = ["git", *(part for item in _CONFIG for part in ("-c", item)), *args]
    with tempfile.TemporaryFile() as said:
        try:
            proc = subprocess.Popen(
                command, cwd=cwd, env=git_env(), stdin=subprocess.PIPE, stdout=said, stderr=said
            )
        except FileNotFoundError:
            raise LibraryError("bourdon needs git on PATH; install git and try again") from None
        assert proc.stdin is not None
        try:
            for chunk in chunks:
                proc.stdin.write(chunk)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # git stopped reading: its exit code and words say why
        finally:
            code = proc.wait()
        if code != 0:
            said.seek(0)
            text = said.read().decode("utf-8", "replace").strip()
            lines = text.splitlines()
            raise GitError(
                f"git {args[0]} failed: {lines[-1] if lines else f'exit {code}'}", stderr=text
            )


def _fast_import_path(path: str) -> bytes:
    """A path as fast-import reads it: quoted C-style when it has a quote, space or newline."""
    if not any(c in path for c in '"\\\n ') and not path.startswith('"'):
        return path.encode("utf-8")
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return b'"' + escaped.encode("utf-8") + b'"'


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The id a full ref name (``refs/...``) holds, read from its file or ``packed-refs``.

    No git process: this runs on every write and every freshness check.
    """
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


@dataclass(frozen=True)
class LogEntry:
    """One commit as history shows it."""

    commit: str
    parents: tuple[str, ...]
    time: int
    message: str


@dataclass(frozen=True)
class ImportedCommit:
    """One commit for ``GitRepo.import_commits``: its changes (``None`` deletes), its time."""

    changes: Mapping[str, bytes | None]
    message: str
    author: str
    committer: str
    when: int  # seconds since the epoch, UTC


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
        self._zero = "0" * (2 * self._oid_bytes)
        self._lock = threading.Lock()
        self._batch: subprocess.Popen[bytes] | None = None

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
        return read_ref(self.git_dir, ref)

    def blob_id(self, data: bytes) -> str:
        """The id git gives a blob of ``data`` (without writing it)."""
        algo = hashlib.sha256 if self.object_format == "sha256" else hashlib.sha1
        return algo(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()

    def read(self, spec: str) -> tuple[str, str, bytes] | None:
        """Read one object by any name git accepts (``<commit>:<path>``); ``None`` if absent."""
        if "\n" in spec:
            raise ValueError("object names cannot contain a newline")
        with self._lock:
            for attempt in (1, 2):
                proc = self._cat_file()
                try:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(spec.encode("utf-8") + b"\n")
                    proc.stdin.flush()
                    return _read_batch_answer(proc.stdout)
                except (BrokenPipeError, OSError, ValueError):
                    self._stop_cat_file()
                    if attempt == 2:
                        raise GitError("git cat-file stopped answering") from None
        return None

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
        entry = _parse_tree(found[2], self._oid_bytes).get(name.encode("utf-8"))
        return entry[1] if entry and entry[0] != _DIR_MODE else None

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
        return _parse_tree(found[2], self._oid_bytes)

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
                if mode == _DIR_MODE:
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
    ) -> str:
        """Commit ``path -> bytes`` (``None`` deletes) on top of ``parent``; return the commit.

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
        tree = self.commit_tree(parent) if parent else None
        nested: dict[tuple[str, ...], bytes | None] = {
            tuple(path.split("/")): data for path, data in changes.items()
        }
        new_tree = self._write_tree(tree, nested) or self._write_object(b"tree", b"")
        now = int(time.time()) if when is None else when
        header = f"tree {new_tree}\n"
        for each in (parent, merged):
            if each:
                header += f"parent {each}\n"
        header += f"author {author} {now} +0000\ncommitter {committer} {now} +0000\n\n"
        commit = self._write_object(b"commit", (header + message.rstrip("\n") + "\n").encode())
        return commit, now

    def import_commits(
        self, commits: Iterable[ImportedCommit], *, parent: str | None
    ) -> str | None:
        """Write a line of commits on top of ``parent`` in one ``git fast-import``; move the branch.

        For many commits at once (adopting a library's whole history): one git process writes
        them all into a pack, where writing loose objects would cost an fsync per object. Each
        commit keeps its own time. The branch moves by compare-and-swap from ``parent`` to the
        last commit, the commit point of the whole line; returns it (``parent`` if none).
        """
        scratch = "refs/bourdon/importing"
        marks = self.git_dir / "bourdon-import.marks"
        count = 0
        self.delete_ref(scratch)  # a crashed import's leftovers must not become a parent

        def stream() -> Iterator[bytes]:
            nonlocal count
            yield b"feature done\n"
            for count, each in enumerate(commits, start=1):
                message = each.message.rstrip("\n").encode("utf-8") + b"\n"
                yield (
                    f"commit {scratch}\nmark :{count}\n"
                    f"author {each.author} {each.when} +0000\n"
                    f"committer {each.committer} {each.when} +0000\n"
                    f"data {len(message)}\n"
                ).encode() + message
                if count == 1 and parent:
                    yield f"from {parent}\n".encode("ascii")
                for path, data in each.changes.items():
                    quoted = _fast_import_path(path)
                    if data is None:
                        yield b"D " + quoted + b"\n"
                    else:
                        yield b"M 100644 inline " + quoted + b"\n"
                        yield f"data {len(data)}\n".encode("ascii") + data + b"\n"
                yield b"\n"
            yield b"done\n"

        try:
            stream_git(
                self.root,
                stream(),
                "fast-import",
                "--quiet",
                "--done",
                f"--export-marks={marks}",
            )
            if count == 0:
                return parent
            last = self.read_ref(scratch)
            if last is None:
                raise GitError("git fast-import wrote no commit")
            reason = f"import {count} commits"
            self._move_branch(parent, last, "bourdon <bourdon@localhost>", int(time.time()), reason)
            return last
        finally:
            self.delete_ref(scratch)
            with contextlib.suppress(FileNotFoundError):
                marks.unlink()

    def _move_branch(self, old: str | None, new: str, who: str, when: int, reason: str) -> None:
        """``git update-ref <branch> <new> <old>``, done the way git does it, in-process.

        Git's own protocol: create ``<ref>.lock`` exclusively (a git process updating the ref
        at the same moment fails instead of racing), check the ref still holds ``old``, write
        and fsync the new id, rename the lock over the ref, fsync the folder, then append the
        reflog lines. Saves a git process on every write.

        Not ``durable.atomic_write``: here the temp file *is* git's lock on the ref, so it must have
        git's name and be created exclusively, and the compare-and-swap happens while it is held.
        """
        ref = self.git_dir / self.branch
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
                if (self.head() or None) != old:
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
        line = f"{old or self._zero} {new} {who} {when} +0000\t{reason}\n".encode()
        for log in (self.git_dir / "logs" / self.branch, self.git_dir / "logs" / "HEAD"):
            with contextlib.suppress(OSError):
                log.parent.mkdir(parents=True, exist_ok=True)
                with open(log, "ab") as handle:
                    handle.write(line)

    def commit_tree(self, commit: str) -> str:
        found = self.read(f"{commit}^{{tree}}")
        if not found:
            raise NotFoundError(f"no commit {commit}")
        return found[0]

    def _write_tree(
        self, tree: str | None, changes: Mapping[tuple[str, ...], bytes | None]
    ) -> str | None:
        entries = self.tree_entries(tree)
        below: dict[str, dict[tuple[str, ...], bytes | None]] = {}
        for parts, data in changes.items():
            if len(parts) > 1:
                below.setdefault(parts[0], {})[parts[1:]] = data
                continue
            name = parts[0].encode("utf-8")
            if data is None:
                entries.pop(name, None)
            else:
                entries[name] = (_FILE_MODE, self._write_object(b"blob", data))
        for directory, sub in below.items():
            name = directory.encode("utf-8")
            current = entries.get(name)
            subtree = self._write_tree(
                current[1] if current and current[0] == _DIR_MODE else None, sub
            )
            if subtree is None:
                entries.pop(name, None)
            else:
                entries[name] = (_DIR_MODE, subtree)
        if not entries:
            return None
        body = b"".join(
            mode + b" " + name + b"\0" + bytes.fromhex(oid)
            for name, (mode, oid) in sorted(
                entries.items(), key=lambda e: e[0] + b"/" if e[1][0] == _DIR_MODE else e[0]
            )
        )
        return self._write_object(b"tree", body)

    def _write_object(self, kind: bytes, body: bytes) -> str:
        raw = kind + b" " + str(len(body)).encode() + b"\0" + body
        algo = hashlib.sha256 if self.object_format == "sha256" else hashlib.sha1
        oid = algo(raw).hexdigest()
        target = self.git_dir / "objects" / oid[:2] / oid[2:]
        if not target.exists():
            # git's own temp name, so a leftover is one git (and crash recovery) knows to clean.
            temp = f"tmp_obj_bourdon_{os.getpid()}_{threading.get_ident()}"
            atomic_write(target, zlib.compress(raw, 1), mode=0o444, temp=temp)
        return oid

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

    def push(self, remote: str, commit: str, branch: str, timeout: float) -> bool:
        """Push ``commit`` to ``branch`` of ``remote`` as a fast-forward only.

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
                f"{commit}:refs/heads/{branch}",
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
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", older, newer],
            cwd=self.root,
            env=git_env(),
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    def sync_index(self) -> None:
        """Make git's own index match HEAD, so ``git status`` in the library reads clean."""
        if self.head() is not None:
            run_git(self.root, "read-tree", self.branch)

    def stale_locks(self) -> Iterator[Path]:
        """Lock and temp files a killed git (or bourdon) process may have left."""
        for name in ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock"):
            if (self.git_dir / name).exists():
                yield self.git_dir / name
        for folder in ("refs", "logs"):
            yield from (self.git_dir / folder).rglob("*.lock")
        yield from (self.git_dir / "objects").glob("??/tmp_obj_*")

    def fsck(self) -> tuple[bool, str]:
        """``git fsck --full --strict``: (clean, what git said)."""
        done = subprocess.run(
            ["git", "fsck", "--full", "--strict", "--no-progress"],
            cwd=self.root,
            env=git_env(),
            capture_output=True,
            check=False,
        )
        said = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
        return done.returncode == 0, said

    def close(self) -> None:
        with self._lock:
            self._stop_cat_file()

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _cat_file(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            self._batch = subprocess.Popen(
                ["git", "-c", "core.fsmonitor=false", "cat-file", "--batch"],
                cwd=self.root,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._batch

    def _stop_cat_file(self) -> None:
        proc, self._batch = self._batch, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _read_batch_answer(stdout: IO[bytes]) -> tuple[str, str, bytes] | None:
    header = stdout.readline()
    if not header:
        raise ValueError("cat-file closed")
    parts = header.split()
    if len(parts) != 3:
        return None  # "<name> missing" or "ambiguous"
    oid, kind, size = parts[0].decode(), parts[1].decode(), int(parts[2])
    data = stdout.read(size)
    stdout.read(1)  # the newline after the object
    return oid, kind, data


def _parse_tree(body: bytes, oid_len: int) -> dict[bytes, tuple[bytes, str]]:
    entries: dict[bytes, tuple[bytes, str]] = {}
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        mode, name = body[at:space], body[space + 1 : nul]
        entries[name] = (mode, body[nul + 1 : nul + 1 + oid_len].hex())
        at = nul + 1 + oid_len
    return entries
