"""Links between pages: a path under ``/ui`` and its query string, the page's level kept.

Query strings are made with ``urllib.parse.urlencode``, never by pasting user text, and drop
empty values and the default level (``team``), so a plain link stays plain.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from bourdon.serve.web.app import PREFIX

DEFAULT_LEVEL = "team"


def href(path: str, level: str = DEFAULT_LEVEL, **params: object) -> str:
    """``/ui`` + ``path`` with ``params`` (``None`` and ``""`` left out) and ``level``.

    >>> href("/entity", "private", name="a b/c")
    '/ui/entity?name=a+b%2Fc&level=private'
    """
    query = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    if level != DEFAULT_LEVEL:
        query["level"] = level
    return PREFIX + path + ("?" + urlencode(query) if query else "")


def segment(text: str) -> str:
    """One path segment, escaped (agent ids are plain already: this is the safe side)."""
    return quote(text, safe="")
