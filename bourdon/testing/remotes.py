"""Git remotes for replication tests and benches: bare repositories in temporary folders."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from bourdon.store.git.process import run_git


def bare_repository(path: Path) -> Path:
    """A new, empty bare repository at ``path`` (what a NAS share or a forge would hold)."""
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, "init", "-q", "--bare", "-b", "main")
    return path


def every_object(repo: Path) -> list[tuple[str, bytes]]:
    """``(id, content)`` of every object reachable from any ref of ``repo``."""
    listed = run_git(repo, "rev-list", "--objects", "--all").decode().split("\n")
    ids = [line.split(" ", 1)[0] for line in listed if line.strip()]
    if not ids:
        return []
    out = run_git(repo, "cat-file", "--batch", stdin=("\n".join(ids) + "\n").encode("ascii"))
    objects, at = [], 0
    while at < len(out):
        header_end = out.index(b"\n", at)
        oid, _kind, size = out[at:header_end].decode().split()
        start = header_end + 1
        objects.append((oid, out[start : start + int(size)]))
        at = start + int(size) + 1
    return objects


def reject_pushes(repo: Path, message: str = "pushes are closed for maintenance") -> None:
    """Make a bare repository refuse every push, the way a server-side hook does."""
    hook = repo / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)


@contextlib.contextmanager
def git_daemon(base: Path, port: int) -> Iterator[str]:
    """Serve the bare repositories under ``base`` over git:// on 127.0.0.1, pushes allowed.

    Yields the URL prefix (``git://127.0.0.1:<port>/``); a network remote as real as a
    forge's, on loopback.
    """
    from bourdon.store.git.process import git_env
    from bourdon.testing.serving import stop_process, wait_for_port

    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        env=git_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(proc, port, timeout=20)
        yield f"git://127.0.0.1:{port}/"
    finally:
        stop_process(proc)
