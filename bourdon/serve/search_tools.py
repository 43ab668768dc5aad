"""``search_federation``: full-text search over the library (and its peers, depth 1).

The search runs in a worker thread (``bourdon.query.search``): a first search on a large
library fills the search file, and the event loop keeps answering other callers meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.federation.searchmerge import merge_search
from bourdon.query import search
from bourdon.serve.caller import scope_of
from bourdon.serve.guard import AskPeers
from bourdon.serve.hints import READ_ONLY

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard


def register_search_tools(server: MCPServer, guard: Guard) -> None:
    tool = server.tool(annotations=READ_ONLY)
    index = guard.index

    @tool
    async def search_federation(
        query: Annotated[
            str,
            Field(description='words to find (any may match), "quoted phrases", prefix* terms'),
        ],
        top_k: Annotated[int, Field(description="results per page, 1 to 50")] = 5,
        min_score: Annotated[float, Field(description="leave out results scoring lower")] = 0.01,
        source: Annotated[
            str | None,
            Field(description="only rows of this kind: entity, session, workstream, note"),
        ] = None,
        access_level: Annotated[
            str, Field(description="public, team or private (private needs include_private)")
        ] = "team",
        include_private: Annotated[
            bool, Field(description="with access_level='private': private rows too (local only)")
        ] = False,
        agent: Annotated[str | None, Field(description="only this agent's rows")] = None,
        kind: Annotated[str | None, Field(description="the same as source")] = None,
        since: Annotated[str | None, Field(description="only rows dated on or after (ISO)")] = None,
        until: Annotated[
            str | None, Field(description="only rows dated on or before (ISO)")
        ] = None,
        limit: Annotated[int | None, Field(description="page size; overrides top_k")] = None,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
        federation_hop: Annotated[
            int, Field(description="depth-1 guard peers pass; end clients leave it at 0")
        ] = 0,
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
