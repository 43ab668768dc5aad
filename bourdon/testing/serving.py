"""Running a real ``bourdon serve`` (or any child process) in a test, on 127.0.0.1 only, and
talking to it over HTTP as a member."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import Client

# All a child needs from the outer env; PYTHONPATH so it imports the same bourdon as its parent.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "PYTHONPATH")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env(home: Path) -> dict[str, str]:
    """A child's environment whose home and bourdon home are ``home``, never the real ones."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV}
    env.update(HOME=str(home), BOURDON_HOME=str(home / ".bourdon"))
    return env


def wait_for_port(
    proc: subprocess.Popen[bytes], port: int, *, timeout: float = 30, log: Path | None = None
) -> None:
    """Return once ``proc`` listens on ``port``; fail with what it said (its stderr pipe, or
    the ``log`` file its stderr went to) if it exits first."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            said = log.read_text(errors="replace") if log else _stderr_of(proc)
            raise AssertionError(said or f"exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing listened on port {port} within {timeout:g} s")
        time.sleep(0.05)


def stop_process(proc: subprocess.Popen[bytes], *, grace: float = 10) -> None:
    """Terminate ``proc``, kill it if it lingers past ``grace``, and close its pipes."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()


def _stderr_of(proc: subprocess.Popen[bytes]) -> str:
    return proc.stderr.read().decode(errors="replace") if proc.stderr is not None else ""


@contextlib.asynccontextmanager
async def bearer_client(url: str, token: str) -> AsyncIterator[Client]:
    """The real MCP client over streamable HTTP at ``url``, presenting ``token`` (a member's)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client({"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client
