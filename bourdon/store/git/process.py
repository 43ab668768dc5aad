"""Running git: the scrubbed environment, one-shot commands, streamed input, the cat-file batch.

Every process bourdon starts is started here. Errors come back as ``GitError`` carrying git's
own words, and a missing git as a ``LibraryError`` that says what to install.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Final

from bourdon.errors import GitError, LibraryError

# What every git process gets, reads included: a library owned by another user (a shared
# folder, a service account) is read all the same, and nothing of the repository's runs.
_READ_CONFIG: Final = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "safe.directory=*",
)
_CONFIG: Final = (
    *_READ_CONFIG,
    "core.fsync=all",
    "core.fsyncMethod=fsync",
    "gc.auto=0",
    "commit.gpgSign=false",
)
_NO_GIT: Final = "bourdon needs git on PATH; install git and try again"


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
        raise LibraryError(_NO_GIT) from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} gave no answer within {timeout:g} s") from None
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}",
            stderr=done.stderr.decode("utf-8", "replace"),
        )
    return done.stdout


def run_plain(cwd: Path, *args: str) -> tuple[int, bytes]:
    """Run git with only the settings every read needs (a check); (exit code, output).

    Used where git's answer is its exit code (``merge-base --is-ancestor``, ``fsck``).
    """
    command = ["git", *(part for item in _READ_CONFIG for part in ("-c", item)), *args]
    done = subprocess.run(command, cwd=cwd, env=git_env(), capture_output=True, check=False)
    return done.returncode, done.stdout + done.stderr


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
            raise LibraryError(_NO_GIT) from None
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


def start_detached(cwd: Path, *args: str, output: IO[bytes]) -> subprocess.Popen[bytes]:
    """Start one git command in the background, in a session of its own, and return at once.

    Its output goes to ``output`` (a file); it reads nothing, and a signal sent to the caller's
    terminal or process group (Ctrl-C) does not reach it. The caller reaps it (``poll``).
    """
    command = ["git", *(part for item in _CONFIG for part in ("-c", item)), *args]
    try:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise LibraryError(_NO_GIT) from None


class CatFile:
    """One long-lived ``git cat-file --batch``: object reads for well under a millisecond each.

    Thread-safe; a batch process that died is started again once before a read gives up.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._batch: subprocess.Popen[bytes] | None = None

    def read(self, spec: str) -> tuple[str, str, bytes] | None:
        """(id, type, bytes) of one object by any name git accepts; ``None`` if absent."""
        if "\n" in spec:
            raise ValueError("object names cannot contain a newline")
        with self._lock:
            for attempt in (1, 2):
                proc = self._process()
                try:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(spec.encode("utf-8") + b"\n")
                    proc.stdin.flush()
                    return _read_batch_answer(proc.stdout)
                except (BrokenPipeError, OSError, ValueError):
                    self._stop()
                    if attempt == 2:
                        raise GitError("git cat-file stopped answering") from None
        return None

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _process(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            self._batch = subprocess.Popen(
                [
                    "git",
                    *(part for item in _READ_CONFIG for part in ("-c", item)),
                    "cat-file",
                    "--batch",
                ],
                cwd=self.root,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._batch

    def _stop(self) -> None:
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


def pid_alive(pid: object) -> bool:
    """Is a process with this id running (ours included)? Anything but a positive int: no."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
