"""Logging in and out: the operator's one-time link, a member's token form, logout.

The token form is protected against login CSRF by a double-submit value: the form's hidden
field must equal the ``bourdon_login`` cookie set when the form was shown (SameSite=Strict, so
another site's page cannot have it sent).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Final

from starlette.responses import RedirectResponse, Response

from bourdon.serve.web.app import Page, without_session
from bourdon.serve.web.links import PREFIX
from bourdon.serve.web.sessions import COOKIE
from bourdon.serve.web.view import View

LOGIN_COOKIE: Final = "bourdon_login"


@without_session
async def login_form(view: View) -> Response:
    return _form(view)


def _form(view: View, message: str = "", status: int = 200) -> Response:
    value = secrets.token_urlsafe(24)
    response = view.web.render(None, "login.html", status, login_csrf=value, message=message)
    response.set_cookie(
        LOGIN_COOKIE, value, httponly=True, samesite="strict", path=PREFIX + "/login", max_age=900
    )
    return response


@without_session
async def login_with_token(view: View) -> Response:
    request = view.request
    form = await request.form()
    sent, kept = str(form.get("csrf", "")), request.cookies.get(LOGIN_COOKIE, "")
    if not sent or not kept or not hmac.compare_digest(sent, kept):
        return view.web.error(None, 403, "cross-site form posts are refused")
    token = str(form.get("token", "")).strip()
    member = view.web.registry.authenticate(token)
    if member is None:
        return _form(view, "That token is wrong, revoked or rotated.", 401)
    session = view.web.sessions.open(member.caller(), member.token_sha256)
    response = view.web.login_response(session)
    response.delete_cookie(LOGIN_COOKIE, path=PREFIX + "/login")
    return response


@without_session
async def login_with_code(view: View) -> Response:
    session = view.web.sessions.redeem(view.request.path_params["code"])
    if session is None:
        return _form(
            view, "That login link was used already or has expired; run bourdon ui again.", 403
        )
    return view.web.login_response(session)


async def logout(view: View) -> Response:
    view.web.sessions.close(view.session.id)
    response = RedirectResponse(PREFIX + "/login", status_code=303)
    response.delete_cookie(COOKIE, path=PREFIX)
    return view.web.secured(response)


PAGES: Final = [
    Page("/login", login_form),
    Page("/login", login_with_token, ("POST",)),
    Page("/login/{code}", login_with_code),
    Page("/logout", logout, ("POST",)),
]
