"""The guard: what every tool and resource does around its own work.

It learns who is calling (the local operator on stdio, a member authenticated by ``httpgate``
over HTTP), asks ``policy`` whether that caller may do this, appends one line to the audit log
either way, and only then runs the work. A ``BourdonError`` becomes an MCP tool error whose
structured content is ``{"error": {"code", "status", "message", "retryable"}}``; anything
unexpected becomes the same with status 500 and is logged, never raised through to the client.
A federated tool passes ``AskPeers``: its local answer is then joined by the peers' (depth 1,
under the deadline) through ``bourdon.federation.join``, the one path all of them take.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import anyio
from mcp.types import CallToolResult, TextContent

from bourdon.access import policy
from bourdon.access.audit import AuditLog
from bourdon.access.callers import Caller
from bourdon.access.trust import MemberRegistry
from bourdon.errors import BourdonError, ConflictError, ForbiddenError, InputError
from bourdon.federation.answers import Merge
from bourdon.federation.client import DEFAULT_DEADLINE, RECOGNITION_DEADLINE, Federation
from bourdon.federation.join import join_peers
from bourdon.query.index import Index
from bourdon.serve.httpgate import current_caller
from bourdon.store.library import Library

log = logging.getLogger("bourdon.server")

# A stale write is an answer, not an error, in the reference: clients written for it read these
# keys at the top level, so a conflict carries them there too, next to bourdon's error object.
STALE_WRITE_KEYS = ("agent_id", "mode", "expected_digest", "current_digest")


def error_result(exc: BourdonError) -> CallToolResult:
    body: dict[str, Any] = exc.to_dict()
    if isinstance(exc, ConflictError):
        lifted = {k: exc.details[k] for k in STALE_WRITE_KEYS if k in exc.details}
        body = {**lifted, "detail": exc.message, **body}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


class _Internal(BourdonError):
    """Stands for an unexpected failure in an answer: status 500, no details leaked."""


@dataclass(frozen=True)
class AskPeers:
    """How a federated tool asks the peers once it has answered locally.

    ``args``: the tool's own arguments to pass on (those left ``None`` are not sent);
    ``merge``: folds the peers' answers into the local one; ``hop``: the call's
    ``federation_hop``; ``recognition``: a turn-start call, with the short deadline and
    ``recognition_latency_us`` in its answer.
    """

    args: Mapping[str, Any]
    merge: Merge
    hop: int
    recognition: bool = False


class Guard:
    """Authorize, audit, answer, and federate where the tool does."""

    def __init__(
        self,
        index: Index,
        library: Library,
        registry: MemberRegistry,
        audit: AuditLog | None,
        federation: Federation | None = None,
        deadlines: tuple[float, float] = (RECOGNITION_DEADLINE, DEFAULT_DEADLINE),
    ) -> None:
        self.index = index
        self.library = library
        self.registry = registry
        self.audit = audit
        self.federation = federation
        self.recognition_deadline, self.deadline = deadlines

    async def run(
        self,
        op: str,
        namespace: str | None,
        work: Callable[[Caller, policy.Decision], Any],
        *,
        peers: AskPeers | None = None,
        thread: bool = False,
        turn_start: bool = False,
        uses_index: bool = True,
        writes: bool = False,
    ) -> dict[str, Any]:
        """The answer to ``op``: ``work``'s, as the caller may have it, then the peers' too
        when ``peers`` says how to ask them. ``writes``: ``work`` may change the library (it
        runs in a worker thread, and the index takes the change in before the answer)."""
        start = time.perf_counter()
        local = await self._locally(
            op,
            namespace,
            work,
            thread=thread or writes,
            turn_start=turn_start,
            uses_index=uses_index and not writes,
            writes=writes,
        )
        if peers is None:
            return local
        answer = await self._with_peers(op, peers, local)
        if peers.recognition and isinstance(answer, dict) and "peers_queried" in answer:
            answer["recognition_latency_us"] = round((time.perf_counter() - start) * 1e6, 1)
        return answer

    async def _locally(
        self,
        op: str,
        namespace: str | None,
        work: Callable[[Caller, policy.Decision], Any],
        *,
        thread: bool,
        turn_start: bool,
        uses_index: bool,
        writes: bool,
    ) -> dict[str, Any]:
        caller = current_caller()
        decision = policy.decide(caller, op, namespace)
        outcome: Any
        try:
            if not decision.allowed:
                denied = ForbiddenError if decision.status == 403 else InputError
                raise denied(decision.reason)
            if turn_start:
                # Never waits: a change starts a rebuild in the background and this call is
                # answered from the current snapshot (no file I/O on most turn-start calls).
                self.index.refresh_if_due()
            elif uses_index and self.index.is_stale():
                # A change made before this call arrived: it waits for it, off the event
                # loop, so every other caller is still answered meanwhile.
                await anyio.to_thread.run_sync(self.index.refresh)
            if thread:
                outcome = await anyio.to_thread.run_sync(
                    lambda: self._work(work, caller, decision, writes)
                )
            else:
                outcome = work(caller, decision)
            status, detail = 200, decision.reason
        except BourdonError as exc:
            outcome, status, detail = error_result(exc), exc.status, exc.message
        except Exception:
            log.exception("unexpected failure while answering %s", op)
            outcome = error_result(_Internal("bourdon failed to answer; the server log says why"))
            status, detail = 500, "internal error"
        # "deny" is the policy saying no; a refused argument or a missing agent is an allowed
        # call that failed, and its status says how.
        self.record(caller, op, namespace, decision.allowed, status, detail)
        # A tool error is a CallToolResult, which the SDK passes through unchanged although
        # the tools are typed as returning their answer dict (that type drives outputSchema).
        return cast(dict[str, Any], outcome)

    def _work(
        self,
        work: Callable[[Caller, policy.Decision], Any],
        caller: Caller,
        decision: policy.Decision,
        writes: bool,
    ) -> Any:
        """``work`` in its worker thread; after a write, the index takes it in there too, so
        the writer's next call sees it and no other caller ever waits for that rebuild."""
        outcome = work(caller, decision)
        if writes:
            self.index.refresh()
        return outcome

    async def _with_peers(self, op: str, peers: AskPeers, local: dict[str, Any]) -> dict[str, Any]:
        """Local only when the call itself comes from a peer (its member is marked peer, or it
        passes federation_hop >= 1), when there are no peers, or when the answer is an error.

        Local only, too, for a caller that reads only some namespaces (a quarantined member):
        its grants name this library's agents, and a peer's agents are never among them, so
        the peers are not asked on its behalf and their rows, agents and names never reach it.
        Likewise for a member that keeps prompts home: a peer's answer cannot be told apart
        into verbatim prompts and the rest, so none is asked for it.
        """
        federation = self.federation
        caller = current_caller()
        if (
            not isinstance(local, dict)
            or federation is None
            or not federation.peers
            or peers.hop >= 1
            or caller.peer
            or caller.readable() is not None
            or caller.keep_home
        ):
            return local
        deadline = self.recognition_deadline if peers.recognition else self.deadline
        return await join_peers(federation, op, peers.args, local, peers.merge, deadline)

    def record(
        self,
        caller: Caller,
        op: str,
        namespace: str | None,
        allowed: bool,
        status: int,
        detail: str,
    ) -> None:
        if self.audit is None:
            return
        try:
            self.audit.append(
                caller=caller.id,
                tier=caller.tier,
                transport=caller.transport,
                op=op,
                namespace=namespace,
                decision="allow" if allowed else "deny",
                status=status,
                detail=detail,
            )
        except OSError:
            log.exception("could not append to the audit log")
