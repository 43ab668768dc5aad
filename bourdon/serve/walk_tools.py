"""The traversal tools: ``expand_neighbors`` and ``fetch_slice`` (``bourdon.query.walk``).

Local only (peers are not walked: a neighbourhood spanning machines would need every hop
authorised on each), read-only, and filtered for quarantined callers like the other reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, SkipValidation

from bourdon.query import walk
from bourdon.serve.caller import scope_of
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import AccessLevel, IncludePrivate, Relationship, RowKind

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard


def register_walk_tools(server: MCPServer, guard: Guard) -> None:
    read = tool(server, READ_ONLY)
    index = guard.index

    @read
    async def expand_neighbors(
        name: Annotated[
            str | list[str] | None,
            Field(description="The seed or seeds: entity names or row ids, at most 8."),
        ] = None,
        depth: Annotated[int, Field(description="Hops to walk, 1-3 (clamped).")] = 1,
        limit: Annotated[int, Field(description="Neighbours to return, 1-24 (clamped).")] = 8,
        relationship_types: Annotated[
            list[Relationship] | None,
            SkipValidation,
            Field(description="Follow only these kinds of edges; omit for all."),
        ] = None,
        types: Annotated[
            list[str] | None,
            Field(description="Return only neighbours of these kinds or entity types."),
        ] = None,
        content_max_chars: Annotated[
            int, Field(description="Preview characters per neighbour, 0-4000 (clamped).")
        ] = 500,
        include_incoming: Annotated[
            bool, Field(description="Also follow edges backwards (rows naming the seed).")
        ] = True,
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
        entity_ids: Annotated[
            list[str] | None,
            Field(description="The traversal contract's name for the seeds, used without name."),
        ] = None,
    ) -> dict[str, Any]:
        """Widen known memories into their graph neighbourhood: the workstreams, sessions and
        notes that name an entity, and the entities those name.

        Returns {origins, unresolved, neighbors[{id, type, name, relationship, direction,
        distance, score, content, project_id, metadata}], total, depth, limit, truncated,
        filters, meta}. Round budget: search or find first, widen once or twice with this
        or fetch_slice, then answer; a fourth round buys noise. For "what do we know about
        X", call get_cross_agent_summary instead. A seed that is unknown or not yours to
        read is listed in unresolved, without saying which.
        """
        return await guard.run(
            "expand_neighbors",
            None,
            lambda c, d: walk.expand_neighbors(
                index,
                name,
                depth,
                limit,
                relationship_types,
                types,
                content_max_chars,
                include_incoming,
                access_level,
                include_private,
                entity_ids=entity_ids,
                scope=scope_of(c),
            ),
        )

    @read
    async def fetch_slice(
        kind: RowKind,
        id: Annotated[
            str, Field(description="A row id from expand_neighbors (or an entity's name).")
        ],
        window: Annotated[int, Field(description="Rows to return, 1-64 (clamped).")] = 3,
        content_max_chars: Annotated[
            int, Field(description="Characters for the whole window, 0-100000 (clamped).")
        ] = 18000,
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
    ) -> dict[str, Any]:
        """The rows dated around one row: a session's neighbouring sessions of its project
        (window centred on it), a note's companions sharing an entity it names, a workstream's
        sessions and notes, an entity's sessions (the most recent window).

        Returns {kind, entity_id, parent_id, parent_name, parent_type, passages[{id, kind,
        name, content, passage_index, passage_total, breadcrumb, truncated, metadata}],
        window, sliced, total, window_start, covers_parent, project_id, content_chars, meta}.
        Cite parent_id. An id that is unknown or not yours to read is the same 404.
        """
        return await guard.run(
            "fetch_slice",
            None,
            lambda c, d: walk.fetch_slice(
                index,
                kind,
                id,
                window,
                content_max_chars,
                access_level,
                include_private,
                scope=scope_of(c),
            ),
        )
