"""What search indexes of each row, and the FTS5 tables it goes in (pure, but for ``fill``).

Every row is one document of three weighted columns: ``title`` (an entity's or workstream's
name), ``tags`` (aliases, tags, type, related entities, a session's project focus) and
``body`` (summary, key actions, working folder, files touched, a note's text). Ranking weighs
them ``WEIGHTS`` (names above tags above body).

The shared file keeps one table per visibility band, ``band0`` (public rows), ``band1``
(public and team) and ``band2`` (all), so a caller's BM25 statistics are those of exactly the
rows it may see. A table made in memory for one caller holds just that caller's rows.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Final, NamedTuple

from bourdon.query.rowid import AnyRow, kind_of, row_id
from bourdon.query.rows import AgentView, EntityRow, NoteRow, SessionRow, WorkstreamRow

BANDS: Final = ("band0", "band1", "band2")
SCHEMA_VERSION: Final = 2
# bm25() takes one weight per column, the unindexed ones included (they never match).
COLUMNS: Final = ("doc_id", "kind", "agent", "label", "date", "title", "tags", "body")
TEXT_COLUMNS: Final = ("title", "tags", "body")
WEIGHTS: Final = (0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 4.0, 1.0)
SEP: Final = " ; "  # between the items of a list field: never a word, so never a match


def table_sql(name: str, temp: bool = False) -> str:
    return (
        f"CREATE VIRTUAL TABLE {'temp.' if temp else ''}{name} USING fts5("
        "doc_id UNINDEXED, kind UNINDEXED, agent UNINDEXED, label UNINDEXED, date UNINDEXED, "
        "title, tags, body, tokenize='porter unicode61 remove_diacritics 2', prefix='2 3')"
    )


def rank_sql(name: str) -> str:
    """``ORDER BY rank`` ranks with the weights (FTS5 then reads only the rows it returns)."""
    weights = ", ".join(str(w) for w in WEIGHTS)
    return f"INSERT INTO {name}({name}, rank) VALUES ('rank', 'bm25({weights})')"


# Rows of the shared file: ``docs`` names each document's agent and version (``doc_key``), so
# an agent's changed documents are found and replaced by rowid in every band; ``agents`` says
# which digest each agent's documents came from.
SCHEMA: Final = "\n".join(
    [
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, key TEXT NOT NULL);",
        "CREATE INDEX docs_agent ON docs(agent);",
        "CREATE TABLE agents (agent TEXT PRIMARY KEY, digest TEXT NOT NULL);",
        *(table_sql(band) + ";" for band in BANDS),
        *(rank_sql(band) + ";" for band in BANDS),
    ]
)


class Doc(NamedTuple):
    doc_id: str
    kind: str
    agent: str
    label: str
    date: str
    title: str
    tags: str
    body: str
    visibility: int


def _join(*groups: Iterable[str | None]) -> str:
    return SEP.join(item for group in groups for item in group if item)


def doc_of(row: AnyRow) -> Doc:
    """The document of one row: its id, its label, its date and its three text columns."""
    rid = row_id(row)
    kind = kind_of(row)
    if isinstance(row, EntityRow):
        date = row.last_touched or ""
        title, tags = row.name, _join(row.aliases, row.tags, (row.type,))
        body = row.summary or ""
    elif isinstance(row, WorkstreamRow):
        date = row.last_touched or row.started or ""
        title, tags = row.name, _join(row.tags, row.related_entities)
        body = row.summary or ""
    elif isinstance(row, SessionRow):
        date, title, tags = row.date, "", _join(row.project_focus)
        body = _join(row.key_actions, (row.cwd,), row.files_touched)
    else:
        assert isinstance(row, NoteRow)
        date, title, tags = row.date, "", _join(row.tags, row.related_entities)
        body = row.text
    return Doc(
        str(rid), kind, row.agent, rid.label, str(date)[:10], title, tags, body, row.visibility
    )


def doc_key(doc: Doc) -> str:
    """What tells two versions of a document apart: a changed row is removed and added."""
    text = "\x1f".join(str(part) for part in doc)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def rows_of(view: AgentView) -> Iterator[AnyRow]:
    yield from view.entities
    yield from view.sessions
    yield from view.workstreams
    yield from view.notes


_INSERT: Final = ",".join("?" * len(COLUMNS))


def insert(conn: sqlite3.Connection, table: str, docs: Iterable[tuple[int, Doc]]) -> None:
    """Add ``(rowid, doc)`` pairs to ``table``."""
    conn.executemany(
        f"INSERT INTO {table}(rowid, {', '.join(COLUMNS)}) VALUES (?, {_INSERT})",
        ((rowid, *doc[: len(COLUMNS)]) for rowid, doc in docs),
    )
