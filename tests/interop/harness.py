"""The reference implementation (bourdon 0.32.2 from the package index), run for real.

The interop suite tests bourdon against the Bourdon that people already run, not against a model
of it: the reference package is installed once into its own virtual environment, cached under
``.cache/reference/<version>/`` (git-ignored), and driven as a subprocess: as a writer of
libraries, as an MCP server over stdio and HTTP on 127.0.0.1, and as a peer.

``$BOURDON_REFERENCE_VENV`` names an existing environment to use instead. When the package index
cannot be reached the suite is skipped with one line saying so, except under CI (``CI=true``),
where a skipped interop suite would hide exactly what it exists to catch, so it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock

from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

REFERENCE_VERSION = "0.32.2"
REFERENCE_REQUIREMENT = f"bourdon[server,federation]=={REFERENCE_VERSION}"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "reference" / REFERENCE_VERSION
INSTALLED_MARK = ".installed"


def _install(venv: Path) -> None:
    """Create ``venv`` with the reference in it; a half-made one (no mark) is made again."""
    if (venv / INSTALLED_MARK).exists():
        return
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            REFERENCE_REQUIREMENT,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode != 0:
        tail = (pip.stderr or pip.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"pip install {REFERENCE_REQUIREMENT} failed: {tail[0]}")
    (venv / INSTALLED_MARK).write_text(REFERENCE_REQUIREMENT + "\n")


def reference_venv() -> Path:
    chosen = os.environ.get("BOURDON_REFERENCE_VENV")
    if chosen:
        return Path(chosen)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(CACHE) + ".lock"):
        _install(CACHE)
    return CACHE


@dataclass(frozen=True)
class Reference:
    """The reference package in its own environment, and how to run it."""

    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin" / "bourdon"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """An environment whose home is ``home``: the reference never sees the real one."""
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
        env.update(HOME=str(home), BOURDON_HOME=str(home / ".bourdon"))
        env.update(extra)
        return env

    def run(
        self, *args: str, home: Path, check: bool = True, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """``bourdon ARGS`` of the reference, with ``home`` as its home."""
        done = subprocess.run(
            [str(self.bin), *args],
            env=self.env(home, **extra),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"reference bourdon {' '.join(args)} exited {done.returncode}: "
                f"{done.stderr.strip()[-2000:]}"
            )
        return done

    def stdio(self, library: Path, home: Path, *args: str) -> Any:
        """Parameters that start the reference's MCP server over stdio on ``library``."""
        from mcp import StdioServerParameters

        return StdioServerParameters(
            command=str(self.bin),
            args=["serve", "--library", str(library), "--quiet", *args],
            env=self.env(home),
        )

    @contextlib.contextmanager
    def serve_http(self, library: Path, home: Path, *args: str, **extra: str) -> Iterator[str]:
        """The reference's server over streamable HTTP on 127.0.0.1; yields its MCP URL."""
        home.mkdir(parents=True, exist_ok=True)
        command = [str(self.bin), "serve", "--library", str(library), "--transport", "http"]
        with listening(
            [*command, "--host", "127.0.0.1", "--quiet", *args],
            self.env(home, **extra),
            home / "reference-serve",
        ) as url:
            yield url

    def add_member(self, home: Path, name: str, tier: str = "trusted") -> str:
        """Enrol a member in the reference's registry; returns its token."""
        args = ["agent", "add", name] + (["--tier", tier] if tier else [])
        out = self.run(*args, home=home).stdout
        return next(w for w in out.split() if w.startswith("bdn_"))


def answer_of(result: Any) -> Any:
    """A tool answer as data: structured content, else the JSON text the reference sends."""
    if result.structured_content is not None:
        return result.structured_content
    for item in result.content:
        text = getattr(item, "text", None)
        if text:
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return text
    return None


@contextlib.asynccontextmanager
async def http_client(url: str, token: str | None = None) -> AsyncIterator[Any]:
    """An MCP client over streamable HTTP with an optional bearer token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers) as hc,
        Client(streamable_http_client(url, http_client=hc)) as client,
    ):
        yield client


async def call(client: Any, tool: str, **args: Any) -> Any:
    """Call ``tool`` and return its answer as data (either server's shape)."""
    return answer_of(await client.call_tool(tool, args))


@contextlib.contextmanager
def serve_ours(library: Path, home: Path, *args: str, **env: str) -> Iterator[str]:
    """Our ``bourdon serve --transport http`` on 127.0.0.1; yields its MCP URL."""
    command = [sys.executable, "-m", "bourdon", "--library", str(library), "serve"]
    with listening(
        [*command, "--transport", "http", "--no-watch", *args],
        {**child_env(home), **env},
        home / "ours-serve",
    ) as url:
        yield url


@contextlib.contextmanager
def listening(command: list[str], env: dict[str, str], log_stem: Path) -> Iterator[str]:
    """Run ``command --port P`` (a free port on 127.0.0.1) until it listens; yield its MCP URL
    and stop it afterwards. What it says on stderr goes to ``<log_stem>-<P>.log``."""
    port = free_port()
    log = log_stem.with_name(f"{log_stem.name}-{port}.log")
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*command, "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        wait_for_port(proc, port, timeout=90, log=log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)
