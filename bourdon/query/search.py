"""``search_federation``: full-text search over every row kind, ranked with BM25.

``search`` answers the reference's keys, ``{"query", "total_matches", "results": [{"doc_id",
"score", "source", "snippet", "metadata"}]}``, plus ``truncated``, ``has_more``,
``next_cursor`` and ``meta`` (the bounds and filters applied). The caller's access decides
the table searched (``searchtables``) before anything is matched, so a row it may not see
weighs in no score, count, order or snippet. ``doc_id`` is the row's id (``rowid``); the
snippet is the row's own text with the matched words marked ``**like this**``.

Results are ordered by score, then id; a cursor is the last result served (its score and id),
so paging neither repeats nor skips a row while the library stays the same.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any, Final

from bourdon.access.visibility import OPEN, Access, Scope, resolve
from bourdon.errors import InputError
from bourdon.query.answer import meta, optional_agent, require_text
from bourdon.query.index import Index
from bourdon.query.paging import parse_since
from bourdon.query.rowid import KINDS
from bourdon.query.searchdocs import TEXT_COLUMNS, WEIGHTS
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
) -> dict[str, Any]:
    """The rows ``access`` may see that match ``query``, best first, one page of them."""
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
    scored: list[tuple[float, str, int, str, str, str]] = []
    page: list[dict[str, Any]] = []
    warnings = [] if match else [f"{text!r} holds no word to search for"]
    if match is not None:
        with tables_of(index.root).table_for(index.state, access) as table:
            scored = _ranked(table, match, filters, floor)
            rest = scored if after is None else [r for r in scored if (-r[0], r[1]) > after]
            page = _results(table, match, rest[:size])
            more = len(rest) > size
    else:
        rest, more = [], False
    last = rest[size - 1] if more else None
    return {
        "query": text,
        "total_matches": len(scored),
        "results": page,
        "truncated": more,
        "has_more": more,
        "next_cursor": _encode(binding, last[0], last[1]) if last is not None else None,
        "meta": meta(
            index,
            access,
            top_k=size,
            limit=size,
            min_score=floor,
            filters={k: v for k, v in filters.items() if v is not None},
            returned=len(page),
            total_matches=len(scored),
            truncated=more,
            ranking="bm25",
            warnings=warnings,
        ),
    }


def _ranked(
    table: Table, match: str, filters: dict[str, str | None], floor: float
) -> list[tuple[float, str, int, str, str, str]]:
    """Every matching document over ``floor``: (score, id, rowid, kind, agent, label)."""
    name = table.name
    where = [f"{name} MATCH ?"]
    args: list[object] = [match]
    for column, op in (("kind", "="), ("agent", "="), ("since", ">="), ("until", "<=")):
        value = filters[column]
        if value is not None:
            where.append(f"{'date' if column in ('since', 'until') else column} {op} ?")
            args.append(value)
    if filters["since"] or filters["until"]:
        where.append("date != ''")
    weights = ", ".join(str(w) for w in WEIGHTS)
    sql = (
        f"SELECT -bm25({name}, {weights}), doc_id, rowid, kind, agent, label FROM {name} "
        f"WHERE {' AND '.join(where)}"
    )
    rows = table.conn.execute(sql, args).fetchall()
    # FTS5 gives a word found in more than half the rows almost no weight (1e-6), so scores
    # have no fixed scale: min_score is a share of the best score, as the reference's
    # cosine scores were a share of a perfect match.
    best = max((r[0] for r in rows), default=0.0)
    rows = [r for r in rows if r[0] >= floor * best]
    rows.sort(key=lambda r: (-r[0], r[1]))
    return rows


def _results(
    table: Table, match: str, chosen: list[tuple[float, str, int, str, str, str]]
) -> list[dict[str, Any]]:
    if not chosen:
        return []
    name = table.name
    marks = ", ".join(f"highlight({name}, {5 + i}, '{_HIT}', '')" for i in range(len(TEXT_COLUMNS)))
    sql = (
        f"SELECT rowid, snippet({name}, -1, '**', '**', '…', {SNIPPET_WORDS}), {marks} "
        f"FROM {name} WHERE {name} MATCH ? AND rowid IN ({','.join('?' * len(chosen))})"
    )
    found = {r[0]: r[1:] for r in table.conn.execute(sql, [match, *(c[2] for c in chosen)])}
    out = []
    for score, doc_id, rowid, kind, agent, label in chosen:
        snippet, *columns = found.get(rowid, ("",))
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


def _encode(binding: str, score: float, doc_id: str) -> str:
    raw = json.dumps({"k": "search", "b": binding, "s": score, "d": doc_id})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: object, binding: str) -> tuple[float, str]:
    """The (negated score, id) a page starts after; a cursor of another query is a 400."""
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
    score, doc_id = data.get("s"), data.get("d")
    if isinstance(score, bool) or not isinstance(score, int | float) or not isinstance(doc_id, str):
        raise bad
    return (-float(score), doc_id)
