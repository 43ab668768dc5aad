"""The front door of the HTTP server: checks made before the MCP SDK sees a request.

In order, each with its own status so a client can tell what is wrong:

1. a token in the query string -> 400 (URLs end up in logs and browser history);
2. a ``Host`` that is not this server's -> 421 (DNS rebinding);
3. an ``Origin`` that is not this server's -> 403 (a web page talking to a local server);
4. a body over the limit (by ``Content-Length``) -> 413; the SDK also stops longer streams;
5. no bearer token, or a wrong or revoked one -> 401, never 500.

The authenticated member becomes the request's ``Caller`` for the tools (``current_caller``).
With ``allow_unauthenticated`` (``serve --allow-unauthenticated``, loopback binds only), a
request that sends no ``Authorization`` header at all is served as the anonymous caller, who
reads public rows and writes nothing; a wrong token is still a 401. Nothing here logs or
echoes token material.

A response stream that has begun and then carries nothing for ``stream_idle`` seconds is ended
(as a whole response; this stateless server never sends on a ``GET`` event stream, so such a
stream would otherwise stay open for as long as the client likes). Clocks on receiving a
request are the connection's (``httpconn``).

Host names and origins declared by the operator (``--allowed-host``, ``--allowed-origin``) are
accepted as the reference Bourdon accepts them: a host matches with any port and may hold
``*`` wildcards; an origin is compared with its default port made explicit.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping
from fnmatch import fnmatchcase
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

import anyio

from bourdon.access.audit import AuditLog
from bourdon.access.callers import Caller
from bourdon.access.trust import TOKEN_PREFIX, MemberRegistry
from bourdon.errors import BourdonError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY: Final = 1024 * 1024
WEB_PREFIX: Final = "/ui"  # the web view's pages (serve.web), behind the same checks
_QUERY_SECRETS: Final = {"token", "access_token", "bearer", "auth", "authorization", "key"}

_CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "bourdon_caller", default=None
)


def current_caller() -> Caller:
    """The caller of the running request: the HTTP member, else the local operator (stdio)."""
    return _CALLER.get() or Caller.operator()


@contextlib.contextmanager
def acting_as(caller: Caller) -> Iterator[None]:
    """Run the tools called inside as ``caller`` (the web view's session)."""
    reset = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(reset)


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


def host_name(value: str) -> str:
    """A ``Host`` header or declared host without its port, lower-case (``[::1]`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_key(origin: str) -> str:
    """``scheme://host:port`` with the default port made explicit; the text itself (lower-case)
    when it is not a plain origin, so it can only match the same text."""
    origin = origin.strip().rstrip("/").lower()
    try:
        parts = urlsplit(origin)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return origin
    if not parts.scheme or not parts.hostname or parts.path or parts.query or port is None:
        return origin
    name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{name}:{port}"


def matches(value: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(value, pattern) for pattern in patterns)


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
        allow_unauthenticated: bool = False,
        extra_hosts: Iterable[str] = (),
        extra_origins: Iterable[str] = (),
        stream_idle: float = math.inf,
        web: App | None = None,
    ) -> None:
        self.app = app
        self.web = web
        self.stream_idle = stream_idle
        self.registry = registry
        self.audit = audit
        self.hosts = allowed_hosts(host, port)
        self.origins = allowed_origins(host, port)
        self.extra_hosts = {host_name(h) for h in extra_hosts}
        self.extra_origins = {origin_key(o) for o in extra_origins}
        self.max_body = max_body
        self.allow_unauthenticated = allow_unauthenticated

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
        if self.web is not None and _is_web(scope):
            # The web view checks its own session cookie and CSRF token; Host, Origin, token
            # in the URL and body size were checked above, as for MCP.
            await self.web(scope, receive, send)
            return
        if self.allow_unauthenticated and "authorization" not in headers:
            await self.serve(Caller.anonymous(), scope, receive, send)
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
        caller = member.caller()
        await self.serve(caller, scope, receive, send)

    async def serve(self, caller: Caller, scope: Scope, receive: Receive, send: Send) -> None:
        reset = _CALLER.set(caller)
        try:
            await _with_idle_limit(self.app, scope, receive, send, self.stream_idle)
        finally:
            _CALLER.reset(reset)

    def check(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        query = scope.get("query_string", b"").decode("latin-1")
        names = {k.lower() for k, _ in parse_qsl(query, keep_blank_values=True)}
        url = unquote(unquote(query + " " + str(scope.get("path", ""))))
        if names & _QUERY_SECRETS or TOKEN_PREFIX in url.lower():
            return 400, "tokens in the URL are refused; send 'Authorization: Bearer <token>'"
        if not self.host_allowed(headers.get("host", "")):
            answers_to = ", ".join(sorted(self.hosts | self.extra_hosts))
            return 421, f"this server answers to {answers_to} only"
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin):
            return 403, "cross-origin requests are refused"
        length = headers.get("content-length")
        if length is not None:
            try:
                if int(length) > self.max_body:
                    return 413, f"request body over {self.max_body:,} bytes"
            except ValueError:
                return 400, "Content-Length is not a number"
        return None

    def host_allowed(self, host: str) -> bool:
        return host in self.hosts or matches(host_name(host), self.extra_hosts)

    def origin_allowed(self, origin: str) -> bool:
        if origin in self.origins or matches(origin_key(origin), self.extra_origins):
            return True
        # A declared host's own pages (https://NAME behind a TLS proxy) are not cross-origin.
        name = urlsplit(origin.strip().lower()).hostname or ""
        return bool(name) and matches(name, self.extra_hosts)

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


async def _with_idle_limit(
    app: App, scope: Scope, receive: Receive, send: Send, idle: float
) -> None:
    """Run ``app``; end its response when, once begun, it sends nothing for ``idle`` seconds."""
    if math.isinf(idle):
        await app(scope, receive, send)
        return
    begun = anyio.Event()
    state = {"last": 0.0, "done": False}

    async def watched(message: Message) -> None:
        if message["type"] == "http.response.start":
            begun.set()
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            state["done"] = True
        state["last"] = anyio.current_time()
        await send(message)

    idled = False
    failure: Exception | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal idled
            await begun.wait()
            while not state["done"]:
                left = state["last"] + idle - anyio.current_time()
                if left <= 0:
                    idled = True
                    group.cancel_scope.cancel()
                    return
                await anyio.sleep(left)

        group.start_soon(watch)
        try:
            await app(scope, receive, watched)
        except Exception as exc:  # raised as itself below, not inside an exception group
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if idled and not state["done"]:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _is_web(scope: Scope) -> bool:
    path = str(scope.get("path", ""))
    return path == "/" or path == WEB_PREFIX or path.startswith(WEB_PREFIX + "/")


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
