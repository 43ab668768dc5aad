"""``search_federation``: full-text search over every row kind, ranked with BM25.

``search`` answers the reference's keys, ``{"query", "total_matches", "results": [{"doc_id",
"score", "source", "snippet", "metadata"}]}``, plus ``truncated``, ``has_more``,
``next_cursor`` and ``meta`` (the bounds and filters applied). The caller's access decides
the table searched (``searchtables``) before anything is matched, so a row it may not see
weighs in no score, count, order or snippet. ``doc_id`` is the row's id (``rowid``); the
snippet is the row's own text with the matched words marked ``**like this**``.

Results are ordered by score, rows of equal score in one fixed order; a cursor says how many
results came before its page (and the first page's best score), so the pages of an unchanged
library neither repeat nor skip a row.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import sqlite3
from typing import Any, Final

from bourdon.access.visibility import OPEN, Access, Scope, resolve
from bourdon.errors import InputError
from bourdon.query.answer import hidden, meta, optional_agent, require_text
from bourdon.query.index import Index
from bourdon.query.paging import parse_since
from bourdon.query.rowid import KINDS
from bourdon.query.searchdocs import TEXT_COLUMNS
from bourdon.query.searchquery import fts_query
from bourdon.query.searchtables import Table, tables_of

MAX_RESULTS: Final = 50
SNIPPET_WORDS: Final = 16
LABEL_KEYS: Final = {"entity": "name", "workstream": "name", "session": "date", "note": "date"}
# What a match in each column stands for, as ``metadata.match`` says it.
FIELDS: Final = {"title": "name", "tags": "tags", "body": "text"}
_HIT: Final = "\x02"


def search_federation(
    index: Index,
    query: object,
    top_k: int = 5,
    min_score: float = 0.01,
    source: str | None = None,
    access_level: str | None = "team",
    include_private: bool = False,
    *,
    agent: str | None = None,
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """The tool's answer: the caller's access resolved, then ``search``."""
    access = resolve(access_level, include_private, scope=scope)
    return search(
        index,
        query,
        access=access,
        top_k=top_k,
        min_score=min_score,
        source=source,
        agent=agent,
        kind=kind,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        scope=scope,
    )


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be a whole number from 1 to {MAX_RESULTS}, got {value!r}")
    return max(1, min(MAX_RESULTS, value))


def _kind(source: object, kind: object) -> str | None:
    chosen = [k for k in (kind, source) if k not in (None, "")]
    if len(set(chosen)) > 1:
        raise InputError(f"kind {kind!r} and source {source!r} disagree; pass one of them")
    if not chosen:
        return None
    if chosen[0] not in KINDS:
        raise InputError(f"kind {chosen[0]!r} is not one of {', '.join(KINDS)}")
    return str(chosen[0])


def search(
    index: Index,
    query: object,
    *,
    access: Access,
    top_k: int = 5,
    min_score: float = 0.01,
    source: str | None = None,
    agent: str | None = None,
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    scope: Scope | None = None,
) -> dict[str, Any]:
    """The rows ``access`` may see that match ``query``, best first, one page of them.

    With ``scope`` (who the caller is), the first page also counts what a wider level the
    caller may ask for would add (``answer.hidden``)."""
    text = require_text(query, "query", "ledger import")
    size = _whole(top_k if limit is None else limit, "limit" if limit is not None else "top_k")
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise InputError(f"min_score must be a number, got {min_score!r}")
    floor = max(0.0, float(min_score))
    chosen = _kind(source, kind)
    agent_id = optional_agent(index, agent, access)
    start, end = parse_since(since), parse_since(until, "until")
    filters = {"kind": chosen, "agent": agent_id, "since": start, "until": end}
    binding = _binding(text, floor, filters)
    after = _decode(cursor, binding) if cursor not in (None, "") else None
    match = fts_query(text)
    page: list[dict[str, Any]] = []
    total, more, best = 0, False, 0.0
    served = 0 if after is None else after[0]
    warnings = [] if match else [f"{text!r} holds no word to search for"]
    if match is not None:
        tables = tables_of(index.root)
        try:
            with tables.table_for(index.state, access) as table:
                total, ranked, page = _answer(table, match, filters, served, size, floor, after)
        except sqlite3.DatabaseError as exc:  # the file went bad under the search
            tables.damaged(exc)
            with tables.table_for(index.state, access, memory=True) as table:
                total, ranked, page = _answer(table, match, filters, served, size, floor, after)
        more = len(ranked) > size
        best = ranked[0][0] if served == 0 and ranked else (after or (0, 0.0))[1]
    next_cursor = _encode(binding, served + size, best) if more else None
    beyond: dict[str, Any] = {}
    if match is not None and scope is not None and after is None:

        def more_at(wider: Access) -> int:
            with tables_of(index.root).table_for(index.state, wider) as table:
                where, args = _where(table.name, match, filters)
                (n,) = table.conn.execute(
                    f"SELECT count(*) FROM {table.name} WHERE {where}", args
                ).fetchone()
            return max(0, int(n) - total)

        try:
            beyond = hidden(access, scope, more_at)
        except sqlite3.DatabaseError:  # a count is not worth failing the answer over
            beyond = {}
    return {
        "query": text,
        "total_matches": len(page),  # the reference's meaning: the results in this answer
        "results": page,
        "truncated": more,
        "has_more": more,
        "next_cursor": next_cursor,
        "meta": meta(
            index,
            access,
            top_k=size,
            limit=size,
            min_score=floor,
            filters={k: v for k, v in filters.items() if v is not None},
            returned=len(page),
            matched=total,
            truncated=more,
            ranking="bm25",
            warnings=warnings,
            **beyond,
        ),
    }


def _answer(
    table: Table,
    match: str,
    filters: dict[str, str | None],
    served: int,
    size: int,
    floor: float,
    after: tuple[int, float] | None,
) -> tuple[int, list[tuple[float, int]], list[dict[str, Any]]]:
    """The count of matches, the ranked rows kept (one more than a page) and the page."""
    where, args = _where(table.name, match, filters)
    (total,) = table.conn.execute(
        f"SELECT count(*) FROM {table.name} WHERE {where}", args
    ).fetchone()
    ranked = _ranked(table, where, args, served, size + 1)
    best = ranked[0][0] if served == 0 and ranked else (after or (0, 0.0))[1]
    kept = [r for r in ranked if r[0] >= floor * best]
    return int(total), kept, _results(table, match, kept[:size])


def _where(name: str, match: str, filters: dict[str, str | None]) -> tuple[str, list[object]]:
    where = [f"{name} MATCH ?"]
    args: list[object] = [match]
    for key, column, op in (
        ("kind", "kind", "="),
        ("agent", "agent", "="),
        ("since", "date", ">="),
        ("until", "date", "<="),
    ):
        if filters[key] is not None:
            where.append(f"{column} {op} ?")
            args.append(filters[key])
    if filters["since"] or filters["until"]:
        where.append("date != ''")
    return " AND ".join(where), args


def _ranked(
    table: Table, where: str, args: list[object], offset: int, count: int
) -> list[tuple[float, int]]:
    """``count`` matches from the ``offset``-th, best first: (score, rowid).

    FTS5 ranks them and reads only the rows it returns; rows of equal score come in the order
    they were added, so every page of an unchanged library is cut from the same list.
    """
    sql = (
        f"SELECT -rank, rowid FROM {table.name} WHERE {where} ORDER BY rank, rowid LIMIT ? OFFSET ?"
    )
    return table.conn.execute(sql, [*args, count, offset]).fetchall()


def _results(table: Table, match: str, chosen: list[tuple[float, int]]) -> list[dict[str, Any]]:
    """The results of the ``(score, rowid)`` chosen: ids, labels, snippets, matched fields."""
    if not chosen:
        return []
    name = table.name
    marks = ", ".join(f"highlight({name}, {5 + i}, '{_HIT}', '')" for i in range(len(TEXT_COLUMNS)))
    sql = (
        f"SELECT rowid, doc_id, kind, agent, label, "
        f"snippet({name}, -1, '**', '**', '…', {SNIPPET_WORDS}), {marks} "
        f"FROM {name} WHERE {name} MATCH ? AND rowid IN ({','.join('?' * len(chosen))})"
    )
    found = {r[0]: r[1:] for r in table.conn.execute(sql, [match, *(c[1] for c in chosen)])}
    out = []
    for score, rowid in chosen:
        doc_id, kind, agent, label, snippet, *columns = found[rowid]
        matched = [
            FIELDS[c]
            for c, text in zip(TEXT_COLUMNS, columns, strict=False)
            if _HIT in (text or "")
        ]
        out.append(
            {
                "doc_id": doc_id,
                "score": float(f"{score:.4g}"),
                "source": kind,
                "snippet": snippet or "",
                "metadata": {
                    "agent": agent,
                    "kind": kind,
                    LABEL_KEYS[kind]: label,
                    "match": matched,
                },
            }
        )
    return out


# -- cursors -------------------------------------------------------------------------------


def _binding(text: str, floor: float, filters: dict[str, str | None]) -> str:
    """What a cursor is valid for: this query, with these filters."""
    blob = json.dumps([text, floor, filters], sort_keys=True)
    return hashlib.blake2b(blob.encode(), digest_size=6).hexdigest()


def _encode(binding: str, served: int, best: float) -> str:
    raw = json.dumps({"k": "search", "b": binding, "n": served, "best": best})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: object, binding: str) -> tuple[int, float]:
    """How many results came before the page, and the best score of the first page (which
    min_score is a share of); a cursor of another query is a 400."""
    bad = InputError("cursor is not one this search gave; pass next_cursor as it came")
    if not isinstance(cursor, str):
        raise bad
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise bad from None
    if not isinstance(data, dict) or data.get("k") != "search":
        raise bad
    if data.get("b") != binding:
        raise InputError("cursor belongs to another query or other filters; start again")
    served, best = data.get("n"), data.get("best")
    if isinstance(served, bool) or not isinstance(served, int) or not 0 <= served <= 100_000:
        raise bad
    if isinstance(best, bool) or not isinstance(best, int | float):
        raise bad
    return (served, float(best))
