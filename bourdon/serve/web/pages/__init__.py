"""The pages of the web view, one module each; ``all_pages`` is the route table."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bourdon.serve.web.app import Page


def all_pages() -> list[Page]:
    from bourdon.serve.web.pages import agent, entity, history, library, login, search, staging

    return [
        *login.PAGES,
        *library.PAGES,
        *agent.PAGES,
        *entity.PAGES,
        *search.PAGES,
        *history.PAGES,
        *staging.PAGES,
    ]
