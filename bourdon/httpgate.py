"""The front door of the HTTP server: checks made before the MCP SDK sees a request.

In order, each with its own status so a client can tell what is wrong:

1. a token in the query string -> 400 (URLs end up in logs and browser history);
2. a ``Host`` that is not this server's -> 421 (DNS rebinding);
3. an ``Origin`` that is not this server's -> 403 (a web page talking to a local server);
4. a body over the limit (by ``Content-Length``) -> 413; the SDK also stops longer streams;
5. no bearer token, or a wrong or revoked one -> 401, never 500.

The authenticated member becomes the request's ``Caller`` for the tools (``current_caller``).
Nothing here logs or echoes token material.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import parse_qsl, unquote

from bourdon.audit import AuditLog
from bourdon.errors import BourdonError
from bourdon.trust import TOKEN_PREFIX, Caller, MemberRegistry

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY: Final = 1024 * 1024
_QUERY_SECRETS: Final = {"token", "access_token", "bearer", "auth", "authorization", "key"}

_CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "bourdon_caller", default=None
)


def current_caller() -> Caller:
    """The caller of the running request: the HTTP member, else the local operator (stdio)."""
    return _CALLER.get() or Caller.operator()


def allowed_hosts(host: str, port: int) -> set[str]:
    """``Host`` header values this server answers to."""
    names = {host, f"[{host}]" if ":" in host else host}
    if host in ("127.0.0.1", "localhost", "::1"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if host in ("0.0.0.0", "::"):  # every interface: clients use the machine's own names
        import socket

        names |= {socket.gethostname(), socket.getfqdn(), "127.0.0.1", "localhost", "[::1]"}
    return {f"{name}:{port}" for name in names}


def allowed_origins(host: str, port: int) -> set[str]:
    return {f"{scheme}://{h}" for h in allowed_hosts(host, port) for scheme in ("http", "https")}


class HttpGate:
    """ASGI middleware in front of the MCP app."""

    def __init__(
        self,
        app: App,
        *,
        registry: MemberRegistry,
        audit: AuditLog | None,
        host: str,
        port: int,
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.registry = registry
        self.audit = audit
        self.hosts = allowed_hosts(host, port)
        self.origins = allowed_origins(host, port)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        refusal = self.check(scope, headers)
        if refusal is not None:
            status, message = refusal
            self.record(scope, "anonymous", status, message)
            await _respond(send, status, message)
            return
        try:
            member = self.registry.authenticate(_bearer(headers.get("authorization", "")))
        except BourdonError as exc:  # an unreadable federation.yaml: the server's fault
            self.record(scope, "anonymous", 503, f"member registry unreadable: {exc.message}")
            await _respond(
                send,
                503,
                "the server cannot read its member registry; its operator must fix federation.yaml",
            )
            return
        if member is None:
            message = (
                "send 'Authorization: Bearer <token>' with a member token "
                "(bourdon member add NAME); the token was missing, wrong or revoked"
            )
            self.record(scope, "anonymous", 401, "no valid token")
            await _respond(send, 401, message, {"www-authenticate": 'Bearer error="invalid_token"'})
            return
        caller = Caller(
            member.id, member.tier, frozenset(member.grants), "http", member.peer, member.max_access
        )
        reset = _CALLER.set(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            _CALLER.reset(reset)

    def check(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        query = scope.get("query_string", b"").decode("latin-1")
        names = {k.lower() for k, _ in parse_qsl(query, keep_blank_values=True)}
        url = unquote(unquote(query + " " + str(scope.get("path", ""))))
        if names & _QUERY_SECRETS or TOKEN_PREFIX in url.lower():
            return 400, "tokens in the URL are refused; send 'Authorization: Bearer <token>'"
        if headers.get("host") not in self.hosts:
            return 421, f"this server answers to {', '.join(sorted(self.hosts))} only"
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "cross-origin requests are refused"
        length = headers.get("content-length")
        if length is not None:
            try:
                if int(length) > self.max_body:
                    return 413, f"request body over {self.max_body:,} bytes"
            except ValueError:
                return 400, "Content-Length is not a number"
        return None

    def record(self, scope: Scope, caller: str, status: int, detail: str) -> None:
        if self.audit is not None:
            self.audit.append(
                caller=caller,
                tier="none",
                transport="http",
                op=f"http {scope.get('method', '')} {scope.get('path', '')}",
                namespace=None,
                decision="deny",
                status=status,
                detail=detail,
            )


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _respond(
    send: Send, status: int, message: str, extra: dict[str, str] | None = None
) -> None:
    code = {
        400: "bad_input",
        401: "unauthenticated",
        403: "forbidden",
        413: "too_large",
        421: "misdirected",
        503: "unavailable",
    }.get(status, "refused")
    error = {"code": code, "status": status, "message": message, "retryable": status == 503}
    body = json.dumps({"error": error}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
