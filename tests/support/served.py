"""A real ``bourdon serve --transport http`` in a subprocess on 127.0.0.1, and its members.

``HttpServer`` starts one over its own library and home; ``member`` is the real MCP client of a
member of its registry (its bearer token over streamable HTTP); ``call`` answers a tool's
structured content and everything the tool said, as one string to look for canaries in.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

STARTUP = 90.0  # seconds for a subprocess server to listen (the box may be busy)


@dataclass
class HttpServer:
    """A server over the library at ``root``, whose user's home (and ``.bourdon``) is ``user``."""

    root: Path
    user: Path
    port: int = field(default_factory=free_port)
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # member id -> its token here
    proc: subprocess.Popen[bytes] | None = None

    @property
    def home(self) -> Path:
        return self.user / ".bourdon"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def log(self) -> Path:
        return self.user / "serve.log"

    def start(self) -> None:
        command = [sys.executable, "-m", "bourdon", "--library", str(self.root), "serve"]
        command += ["--transport", "http", "--port", str(self.port), "--no-watch", *self.args]
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                command,
                env={**child_env(self.user), **self.env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def wait(self) -> None:
        assert self.proc is not None
        wait_for_port(self.proc, self.port, timeout=STARTUP, log=self.log)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


@contextlib.asynccontextmanager
async def member(server: HttpServer, name: str) -> AsyncIterator[Client]:
    """The member ``name`` of ``server``, over streamable HTTP with its bearer token."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client({"Authorization": f"Bearer {server.tokens[name]}"}) as hc,
        Client(streamable_http_client(server.url, http_client=hc)) as client,
    ):
        yield client


async def call(client: Client, tool: str, **args: Any) -> tuple[dict[str, Any], str]:
    """The structured answer, and everything the tool answered less the arguments it echoes."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    answer = dict(result.structured_content or {})
    texts = []
    for content in result.content:
        text = getattr(content, "text", "")
        with contextlib.suppress(ValueError):
            if json.loads(text) == result.structured_content:
                continue  # the same answer, serialized
        texts.append(text)
    seen = {k: v for k, v in answer.items() if not (k in args and v == args[k])}
    return answer, json.dumps(seen) + "\n".join(texts)
