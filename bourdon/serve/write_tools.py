"""The write tools: commit a contribution, roll an agent's memory back.

Both run in a worker thread (a git commit), and the index takes the new manifest in before
they answer (``Guard.run(writes=True)``): the writer's next call sees its write, while other
callers keep being answered from the previous snapshot until the new one is swapped in. Who
may write what, and whether a write is staged, is the guard's ``policy.Decision``.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.serve.caller import provenance_of, seen_level
from bourdon.serve.hints import WRITE, tool
from bourdon.serve.params import (
    AgentId,
    AgentType,
    Entities,
    ExpectedDigest,
    Mode,
    Notes,
    OnClamp,
    SessionId,
    Sessions,
    TranscriptRef,
    Workstreams,
)
from bourdon.serve.writes import commit, rollback

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.access import policy
    from bourdon.access.callers import Caller
    from bourdon.serve.guard import Guard


def register_write_tools(server: MCPServer, guard: Guard) -> None:
    @tool(server, WRITE)
    async def commit_to_federation(
        agent_id: Annotated[
            str,
            Field(
                description=(
                    "Your own agent id, the memory to write to (claude-desktop, codex): 1-64 "
                    "lower-case letters, digits, - and _."
                )
            ),
        ],
        agent_type: AgentType = None,
        instance: Annotated[
            str | None,
            Field(
                description="Which machine or deployment of the agent this is (at most 128 chars)."
            ),
        ] = None,
        role_narrative: Annotated[
            str | None,
            Field(description="The agent's role among the user's agents (at most 500 characters)."),
        ] = None,
        entities: Entities = None,
        sessions: Sessions = None,
        workstreams: Workstreams = None,
        notes: Notes = None,
        mode: Mode = "merge",
        session_id: SessionId = None,
        transcript_ref: TranscriptRef = None,
        expected_digest: ExpectedDigest = None,
        on_clamp: OnClamp = "spill",
    ) -> dict[str, Any]:
        """Write a contribution to the federation under agent_id, as one git commit.

        mode "merge" (default) unions rows with the manifest (entities by name ignoring case,
        sessions by date + cwd + session id, workstreams by name, notes by date + text; list
        fields unioned, other fields overwritten); "replace" writes only what is given and is
        destructive. agent_type is needed for a new agent. A result identical to the current
        manifest writes nothing and answers no_op with the unchanged digest. expected_digest
        guards against lost updates (a stale one is a 409 carrying the current digest).
        session_id and transcript_ref are recorded as provenance. on_clamp says what happens
        to list items a merge would drop past their limit. A note or session without a date
        is dated today, and meta.warnings says so; a problem with a row names its index in
        what you sent (notes[2].text). Quarantined members may write only their own agent id,
        and their writes wait in staging until the operator promotes them.
        """

        def work(caller: Caller, decision: policy.Decision) -> dict[str, Any]:
            rollback.require_digest(expected_digest)
            today, warnings = datetime.date.today(), list[str]()
            change = commit.build_change(
                agent_type,
                instance,
                role_narrative,
                entities,
                sessions,
                workstreams,
                notes,
                today=today,
                warnings=warnings,
            )
            return commit.commit_to_federation(
                guard.library,
                agent_id,
                change,
                mode=mode,
                expected_digest=expected_digest,
                provenance=provenance_of(caller, session_id, transcript_ref),
                staged=decision.staged,
                level=seen_level(caller),
                local=caller.transport == "stdio",
                on_clamp=on_clamp,
                warnings=warnings,
                today=today,
            )

        return await guard.run("commit_to_federation", agent_id, work, writes=True)

    @tool(server, WRITE)
    async def rollback_agent_memory(
        agent_id: AgentId,
        version_id: Annotated[
            str,
            Field(description="The version to restore: a version_id from list_memory_versions."),
        ],
        expected_digest: ExpectedDigest = None,
        session_id: SessionId = None,
        confirm: Annotated[
            bool | None,
            Field(description="false only previews, like dry_run; omit or true to restore."),
        ] = None,
        dry_run: Annotated[
            bool, Field(description="Only preview what would change and the current digest.")
        ] = False,
    ) -> dict[str, Any]:
        """Restore an archived version of an agent's memory. TRUSTED ONLY.

        Discards every contribution made after the chosen version, as a new version, so the
        rollback itself can be undone. Pass expected_digest so a write made meanwhile is
        refused (409) rather than erased. dry_run=true (or confirm=false) only previews what
        would change and the current digest to pass back; nothing is written.
        """
        return await guard.run(
            "rollback_agent_memory",
            agent_id,
            lambda c, d: rollback.rollback_agent_memory(
                guard.library,
                agent_id,
                version_id,
                expected_digest=expected_digest,
                dry_run=dry_run,
                confirm=confirm,
                provenance=provenance_of(c, session_id, None),
                level=seen_level(c),
            ),
            thread=True,
            uses_index=False,
        )
