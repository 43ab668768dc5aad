"""``search_federation``: full-text search over the library (and its peers, depth 1).

The search runs in a worker thread (``bourdon.query.search``): a first search on a large
library fills the search file, and the event loop keeps answering other callers meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, SkipValidation

from bourdon.federation.searchmerge import merge_search
from bourdon.query import search
from bourdon.serve.caller import scope_of
from bourdon.serve.guard import AskPeers
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import (
    AccessLevel,
    AgentFilter,
    Cursor,
    FederationHop,
    IncludePrivate,
    RowKindFilter,
)

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard


def register_search_tools(server: MCPServer, guard: Guard) -> None:
    read = tool(server, READ_ONLY)
    index = guard.index

    @read
    async def search_federation(
        query: Annotated[
            str,
            Field(description='Words to find (any may match), "quoted phrases" and prefix* terms.'),
        ],
        top_k: Annotated[int, Field(description="Results per page, 1 to 50.")] = 5,
        min_score: Annotated[
            float, Field(description="Leave out results scoring lower than this.")
        ] = 0.01,
        source: RowKindFilter = None,
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
        agent: AgentFilter = None,
        kind: Annotated[
            Literal["entity", "session", "workstream", "note"] | None,
            SkipValidation,
            Field(description="The same as source: only rows of this kind."),
        ] = None,
        since: Annotated[
            str | None, Field(description="Only rows dated on or after this ISO date.")
        ] = None,
        until: Annotated[
            str | None, Field(description="Only rows dated on or before this ISO date.")
        ] = None,
        limit: Annotated[
            int | None, Field(description="Page size; overrides top_k when given.")
        ] = None,
        cursor: Cursor = None,
        federation_hop: FederationHop = 0,
    ) -> dict[str, Any]:
        """Full-text search across the federated agents' entities, sessions, workstreams
        and notes, ranked with BM25 (names above tags above body; stemmed words).

        Returns {"query", "total_matches", "results": [{"doc_id", "score", "source",
        "snippet", "metadata"}], "truncated", "has_more", "next_cursor", "meta"}: doc_id is
        the row's id, snippet marks the matched words **like this**, metadata names the agent,
        the kind, the row's name or date and the fields that matched. Peers' results join the
        first page interleaved by rank (their scores are on their own scale).
        """
        ask = AskPeers(
            {
                "query": query,
                "top_k": top_k if limit is None else limit,
                "min_score": min_score,
                "source": source or kind,
            },
            merge_search,
            federation_hop,
        )
        return await guard.run(
            "search_federation",
            agent or None,
            lambda c, d: search.search_federation(
                index,
                query,
                top_k,
                min_score,
                source,
                access_level,
                include_private,
                agent=agent,
                kind=kind,
                since=since,
                until=until,
                limit=limit,
                cursor=cursor,
                scope=scope_of(c),
            ),
            peers=None if cursor or agent or since or until else ask,
            thread=True,
        )
