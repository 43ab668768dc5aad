"""The turn tools: recognition at turn start, deeper context after it, the turn briefs.

Recognition reads only the in-memory index (``turn_start``: refreshed only when due) and asks
the peers under the short recognition deadline; the other two are local only.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.federation.answers import merge_recognition
from bourdon.query import context, turnbrief
from bourdon.serve.caller import scope_of
from bourdon.serve.guard import AskPeers
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import (
    AccessLevel,
    BriefAccessLevel,
    BriefFormat,
    CodexMaxChars,
    Cwd,
    FederationHop,
    IncludePrivate,
    MaxChars,
    MaxItems,
    Prompt,
)

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard


def peer_line(match: Mapping[str, Any]) -> str:
    """A peer's match as a line of the prompt fragment, marked as bourdon's, naming its agents.

    Everything in it is the peer's text: each part is made one bounded line, so no agent name
    or entity name a peer sends can start a line of its own."""
    return (
        f"[bourdon:{context.agent_list(match['agents'], 2)}] {context.one_line(match['name'], 80)}"
        f" ({context.one_line(match.get('type') or 'topic', 30)})"
    )


MERGE_RECOGNITION = functools.partial(merge_recognition, line=peer_line, header=context.HEADER)


def register_turn_tools(server: MCPServer, guard: Guard) -> None:
    read = tool(server, READ_ONLY)
    index = guard.index

    @read
    async def prepare_recognition_context(
        prompt: Prompt,
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
        federation_hop: FederationHop = 0,
    ) -> dict[str, Any]:
        """Return immediate recognition and a bounded prompt-context fragment.

        Call it at turn start and prepend prompt_context (at most 1,200 characters and 12
        lines, each marked as bourdon's and naming its agents) to the model prompt. It reads
        only the in-memory index and never waits on retrieval. drifting_surfaces is present
        only when a reader's store stopped yielding. federation_hop: see find_entity.
        """
        return await guard.run(
            "prepare_recognition_context",
            None,
            lambda c, d: context.prepare_recognition_context(
                index, prompt, access_level, include_private, scope=scope_of(c)
            ),
            peers=AskPeers({"prompt": prompt}, MERGE_RECOGNITION, federation_hop, recognition=True),
            turn_start=True,
        )

    @read
    async def get_deeper_context(
        prompt: Prompt,
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
    ) -> dict[str, Any]:
        """Return post-recognition deeper context for the prompt.

        Separate from prepare_recognition_context so recognition never waits on it.
        Assembled from the local library without any model call: related sessions,
        workstreams and notes, with source, entities, doors (which retrieval door matched),
        truncated, and reason when empty.
        """
        return await guard.run(
            "get_deeper_context",
            None,
            lambda c, d: context.get_deeper_context(
                index, prompt, access_level, include_private, scope=scope_of(c)
            ),
        )

    @read
    async def compile_codex_turn(
        prompt: Prompt,
        cwd: Cwd = None,
        access_level: BriefAccessLevel = "team",
        max_items: MaxItems = 6,
        max_chars: CodexMaxChars = 1800,
    ) -> dict[str, Any]:
        """Compile a turn-scoped Codex recognition brief.

        Ranks what the prompt names, the working folder's project and earlier Codex work in
        that folder into a compact prompt fragment within max_items and max_chars.
        """
        return await guard.run(
            "compile_codex_turn",
            None,
            lambda c, d: context.compile_codex_turn(
                index, prompt, cwd, access_level, max_items, max_chars, scope=scope_of(c)
            ),
            turn_start=True,
        )

    @read
    async def compile_turn(
        prompt: Prompt,
        agent: Annotated[
            str, Field(description="The agent the brief is for (codex, claude-code, ...).")
        ] = "generic",
        cwd: Cwd = None,
        access_level: BriefAccessLevel = "team",
        max_items: MaxItems = 6,
        max_chars: MaxChars = 1800,
        format: BriefFormat = "markdown",  # the reference's parameter name
        verbose: Annotated[
            bool, Field(description="Also every format's rendering and the scoring trace.")
        ] = False,
    ) -> dict[str, Any]:
        """Call first, before answering, when the prompt mentions the user's projects, people,
        decisions or earlier work: returns a bounded brief (brief, in the chosen format, every
        line marked as bourdon's and naming its agents), its ranked items (rank, kind, name,
        summary, source_agents) and routing (mode, confidence); meta reports the applied
        bounds. Reads only the in-memory index."""
        return await guard.run(
            "compile_turn",
            None,
            lambda c, d: turnbrief.compile_turn(
                index,
                prompt,
                agent,
                cwd,
                access_level,
                max_items,
                max_chars,
                format,
                verbose,
                scope=scope_of(c),
            ),
            turn_start=True,
        )
