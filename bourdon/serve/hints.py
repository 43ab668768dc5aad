"""How the tools are registered: their MCP annotations (reads change nothing, writes are
commits) and their descriptions, dedented so a model reads prose rather than source indent."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.types import ToolAnnotations

if TYPE_CHECKING:
    from mcp.server import MCPServer

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

F = TypeVar("F", bound=Callable[..., Any])


def tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[F], F]:
    """``server.tool`` with ``annotations`` and the function's docstring, dedented, as the
    tool's description."""

    def register(fn: F) -> F:
        described = server.tool(
            annotations=annotations, description=inspect.cleandoc(fn.__doc__ or "")
        )
        return described(fn)

    return register
