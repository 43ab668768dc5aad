"""Links between pages: a path under ``/ui`` and its query string, the page's level kept.

Query strings are made with ``urllib.parse.urlencode``, never by pasting user text, and drop
empty values and the default level (``team``), so a plain link stays plain.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, urlencode

PREFIX: Final = "/ui"  # where the web view's pages are
DEFAULT_LEVEL: Final = "team"


def href(path: str, level: str = DEFAULT_LEVEL, **params: object) -> str:
    """``/ui`` + ``path`` with ``params`` (``None`` and ``""`` left out) and ``level``.

    >>> href("/entity", "private", name="a b/c")
    '/ui/entity?name=a+b%2Fc&level=private'
    """
    return url(PREFIX + path, level, **params)


def url(path: str, level: str = DEFAULT_LEVEL, **params: object) -> str:
    """``path`` (under ``/ui`` already) with its query string: the templates' ``url``.

    >>> url("/ui/search", "team", q="a&b", agent="")
    '/ui/search?q=a%26b'
    """
    query = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    if level != DEFAULT_LEVEL:
        query["level"] = level
    return path + ("?" + urlencode(query) if query else "")


def segment(text: str) -> str:
    """One path segment, escaped (agent ids are plain already: this is the safe side)."""
    return quote(text, safe="")
