"""What a page handler is given: the request, its session, and the tools as that caller.

``View.call`` runs a tool of the MCP server in-process, as the session's caller, through the
guard: the policy decides, the audit records, visibility is applied, exactly as for an MCP
client. A page never reads the library or the index around it, so it can show no more than
the tools would answer that caller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult

from bourdon.access.callers import Caller
from bourdon.access.policy import Decision
from bourdon.errors import InputError
from bourdon.model import Visibility
from bourdon.serve.httpgate import acting_as

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from starlette.requests import Request
    from starlette.responses import Response

    from bourdon.serve.web.app import WebApp
    from bourdon.serve.web.sessions import Session


class ToolFailed(Exception):
    """A tool answered with an error: its status and message, shown on the error page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class View:
    request: Request
    session: Session
    server: MCPServer
    web: WebApp
    form: dict[str, str] = field(default_factory=dict)  # a POST's fields, CSRF checked

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        return self.web.render(self, template, status, **context)

    @property
    def caller(self) -> Any:
        return self.session.caller

    @property
    def is_operator(self) -> bool:
        return bool(self.session.caller.is_operator)

    @property
    def level(self) -> str:
        """The visibility level the page is read at: ``?level=`` within the caller's ceiling
        (private only for the operator); ``team`` when not given."""
        asked = self.request.query_params.get("level", "team")
        ceiling = self.session.caller.ceiling
        try:
            wanted = Visibility.parse(asked)
        except InputError:
            wanted = Visibility.TEAM
        return str(min(wanted, ceiling))

    def level_args(self) -> dict[str, Any]:
        """``access_level`` (and ``include_private``) for a read tool at ``level``."""
        if self.level == "private":
            return {"access_level": "private", "include_private": True}
        return {"access_level": self.level}

    async def read(
        self,
        op: str,
        namespace: str | None,
        work: Callable[[Caller, Decision], Any],
        *,
        writes: bool = False,
    ) -> Any:
        """``work``'s answer under the policy rule of ``op`` (a tool or resource name) for
        ``namespace``, through the guard as a tool call is: decided, audited, and a refusal
        or a failure raised as ``ToolFailed``. For what no single tool answers (a page of
        one agent's rows, counts by visibility), with the caller's scope (``scope_of``).
        ``writes``: ``work`` changes the library (run in a worker thread, and the index takes
        the change in before the answer), as the write tools run."""
        guard = self.server.bourdon_guard  # type: ignore[attr-defined]
        with acting_as(self.session.caller):
            answer = await guard.run(op, namespace, work, writes=writes)
        return _answer(answer)

    async def call(self, op: str, /, **arguments: Any) -> dict[str, Any]:
        """The structured answer of tool ``op``; ``ToolFailed`` when it answers an error."""
        args = {k: v for k, v in arguments.items() if v is not None}
        with acting_as(self.session.caller):
            result = await self.server.call_tool(op, args)
        return dict(_answer(result))


def _answer(result: Any) -> Any:
    """A tool's structured answer; its error as ``ToolFailed``."""
    if isinstance(result, CallToolResult):
        body = dict(result.structured_content or {})
        if result.is_error:
            error = body.get("error") or {}
            raise ToolFailed(int(error.get("status", 500)), str(error.get("message", "failed")))
        return body
    return result
