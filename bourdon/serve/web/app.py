"""The web view's ASGI app: routes, the session check, CSRF, rendering and security headers.

Every page needs a session (a GET without one is sent to the login form); every POST must
carry the session's CSRF token in its form (and the door has already refused a foreign
``Origin``). Cookies are HttpOnly and SameSite=Strict, scoped to ``/ui``. A handler gets a
``View`` and answers a response; a tool error it lets through becomes an error page with the
tool's status.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from bourdon import __version__
from bourdon.access.trust import MemberRegistry
from bourdon.serve.web import filters
from bourdon.serve.web.links import PREFIX
from bourdon.serve.web.sessions import COOKIE, Session, Sessions
from bourdon.serve.web.view import ToolFailed, View

if TYPE_CHECKING:
    from mcp.server import MCPServer

log = logging.getLogger("bourdon.web")

Handler = Callable[[View], Awaitable[Response]]

HEADERS: Final = {
    "cache-control": "no-store",
    # A login link never leaves for another site in a Referer. Not "no-referrer": under it a
    # browser sends "Origin: null" with the page's own form posts, which the door refuses.
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}
STATIC: Final = {"ui.css": "text/css", "ui.js": "text/javascript"}


@dataclass(frozen=True)
class Page:
    """One route of the web view: ``path`` under ``/ui``, its handler, its methods."""

    path: str
    handler: Handler
    methods: tuple[str, ...] = ("GET",)
    name: str = ""


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bourdon.serve.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    filters.install(env)
    return env


class WebApp:
    """The pages of ``pages`` over ``server``'s tools, for the sessions of ``sessions``."""

    def __init__(
        self,
        server: MCPServer,
        registry: MemberRegistry,
        sessions: Sessions | None = None,
        pages: list[Page] | None = None,
    ) -> None:
        from bourdon.serve.web.pages import all_pages

        self.server = server
        self.registry = registry
        self.sessions = sessions or Sessions()
        self.env = environment()
        routes = [
            Route(PREFIX + page.path, self._wrap(page), methods=list(page.methods))
            for page in (pages if pages is not None else all_pages())
        ]
        routes.append(Route(PREFIX + "/static/{name}", self._static, methods=["GET"]))
        routes.append(Route("/", _to_library, methods=["GET"]))
        routes.append(Route(PREFIX, _to_library, methods=["GET"]))
        # Last: any other address under /ui is this view's own 404 page, headers and all.
        routes.append(Route(PREFIX + "/{rest:path}", self._not_found, methods=["GET", "POST"]))
        self.app = Starlette(routes=routes)
        self.app.state.web = self

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)

    # -- sessions ---------------------------------------------------------------------------

    def session_of(self, request: Request) -> Session | None:
        """The request's live session; a member's ends once its token is rotated or revoked,
        and reads with the member's grants and tier as they are now, not as at its login."""
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is None or session.token_sha256 is None:
            return session
        try:
            member = self.registry.get(session.caller.id)
        except Exception:  # a member removed, or an unreadable registry: no session
            member = None
        if member is None or not member.active or member.token_sha256 != session.token_sha256:
            self.sessions.close(session.id)
            return None
        session.caller = member.caller()
        return session

    def login_response(self, session: Session, to: str = PREFIX + "/") -> Response:
        response = RedirectResponse(to, status_code=303)
        response.set_cookie(
            COOKIE, session.id, httponly=True, samesite="strict", path=PREFIX, secure=False
        )
        return self.secured(response)

    # -- rendering ---------------------------------------------------------------------------

    def render(
        self, view: View | None, template: str, status: int = 200, **context: Any
    ) -> Response:
        context.setdefault("active", "")
        html = self.env.get_template(template).render(
            view=view,
            session=view.session if view else None,
            prefix=PREFIX,
            version=__version__,
            **context,
        )
        return self.secured(HTMLResponse(html, status_code=status))

    @staticmethod
    def secured(response: Response) -> Response:
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    def error(self, view: View | None, status: int, message: str) -> Response:
        return self.render(view, "error.html", status=status, status_code=status, message=message)

    # -- routing ------------------------------------------------------------------------------

    def _wrap(self, page: Page) -> Callable[[Request], Awaitable[Response]]:
        public = getattr(page.handler, "without_session", False)

        async def endpoint(request: Request) -> Response:
            if public:
                return await page.handler(View(request, None, self.server, self))  # type: ignore[arg-type]
            session = self.session_of(request)
            if session is None:
                if request.method == "GET":
                    return self.secured(RedirectResponse(PREFIX + "/login", status_code=303))
                return self.error(None, 401, "log in first: this form needs a session")
            view = View(request, session, self.server, self)
            if request.method == "POST":
                form = await request.form()
                sent = str(form.get("csrf", ""))
                if not sent or not hmac.compare_digest(sent, session.csrf):
                    return self.error(view, 403, "cross-site form posts are refused")
                view.form = {k: str(v) for k, v in form.items()}
            try:
                return await page.handler(view)
            except ToolFailed as failed:
                return self.error(view, failed.status, failed.message)
            except Exception:
                log.exception("the web view failed to answer %s", request.url.path)
                return self.error(view, 500, "bourdon failed to show this page; the log says why")

        return endpoint

    async def _not_found(self, request: Request) -> Response:
        session = self.session_of(request)
        view = View(request, session, self.server, self) if session else None
        return self.error(view, 404, "no such page; the library page links to every page")

    async def _static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", status_code=404)
        body = resources.files("bourdon.serve.web").joinpath("static", name).read_bytes()
        response = Response(body, media_type=STATIC[name])
        response.headers["cache-control"] = "max-age=3600"
        response.headers["x-content-type-options"] = "nosniff"
        return response


async def _to_library(request: Request) -> Response:
    return WebApp.secured(RedirectResponse(PREFIX + "/", status_code=303))


def without_session(handler: Handler) -> Handler:
    """Mark a handler that answers without a session (the login pages)."""
    handler.without_session = True  # type: ignore[attr-defined]
    return handler
