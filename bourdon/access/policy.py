"""Who may call what: one declarative table, and the decision for one call (pure).

Trusted callers (and the local operator on stdio) may call everything. For quarantined callers
each tool or resource has one rule:

- ``filtered``: allowed, and every answer is cut to the namespaces the caller may read (its
  grants and its own id), so no other agent's ids, tags, types or summaries reach it; naming
  another namespace explicitly (``agent=...``) is denied;
- ``granted``: allowed only for a namespace the caller may read;
- ``own``: a write, allowed only under the caller's own agent id, and staged, never live;
- ``deny``: never (rollback: a deletion wearing a restore's clothes);
- ``allow``: always (``describe_caller``).

The anonymous caller (a tokenless request to ``serve --allow-unauthenticated``) may call only
``ANONYMOUS_READS``: the reads that apply the caller's visibility ceiling (public) to every
row they return. Writes, history, rollback and the health report are refused with 403.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from bourdon.access.callers import Caller


class Decision(NamedTuple):
    allowed: bool
    status: int
    reason: str
    staged: bool = False


FILTERED: Final = "filtered"
GRANTED: Final = "granted"
OWN: Final = "own"
DENY: Final = "deny"
ALLOW: Final = "allow"

QUARANTINED_RULES: Final[dict[str, str]] = {
    "find_entity": FILTERED,
    "query_agent_memory": GRANTED,
    "get_cross_agent_summary": FILTERED,
    "list_recent_work": FILTERED,
    "list_workstreams": FILTERED,
    "list_notes": FILTERED,
    "list_agents": FILTERED,
    "export_agents": FILTERED,
    "list_memory_versions": GRANTED,
    "explain_memory_change": GRANTED,
    "trace_entity": FILTERED,
    "rollback_agent_memory": DENY,
    "commit_to_federation": OWN,
    "forget": OWN,
    "describe_caller": ALLOW,
    "prepare_recognition_context": FILTERED,
    "get_deeper_context": FILTERED,
    "compile_codex_turn": FILTERED,
    "expand_neighbors": FILTERED,
    "fetch_slice": FILTERED,
    "compile_turn": FILTERED,
    "memory_status": FILTERED,
    "search_federation": FILTERED,
    "resource:agents": FILTERED,
    "resource:agent_memory": GRANTED,
    "resource:entity": FILTERED,
}


ANONYMOUS_READS: Final = frozenset(
    {
        "find_entity",
        "query_agent_memory",
        "get_cross_agent_summary",
        "list_recent_work",
        "list_workstreams",
        "list_notes",
        "list_agents",
        "describe_caller",
        "prepare_recognition_context",
        "get_deeper_context",
        "compile_codex_turn",
        "expand_neighbors",
        "fetch_slice",
        "trace_entity",
        "search_federation",
        "compile_turn",
        "resource:agents",
        "resource:agent_memory",
        "resource:entity",
    }
)


def decide(caller: Caller, op: str, namespace: str | None = None) -> Decision:
    """May ``caller`` run ``op`` (on ``namespace``, when the call names one)?"""
    if caller.trusted:
        return Decision(True, 200, "trusted")
    if caller.is_anonymous:
        if op in ANONYMOUS_READS:
            return Decision(True, 200, "anonymous: public rows only")
        return Decision(
            False, 403, f"{op} needs a member token (bourdon member add NAME gives one)"
        )
    rule = QUARANTINED_RULES.get(op, DENY)
    if rule == ALLOW:
        return Decision(True, 200, "allowed to every member")
    if rule == DENY:
        return Decision(False, 403, f"{op} is for trusted members only")
    if rule == OWN:
        if namespace != caller.id:
            return Decision(
                False,
                403,
                f"a quarantined member writes only its own agent id "
                f"({caller.id!r}), not {namespace!r}",
            )
        return Decision(True, 200, "staged for review", staged=True)
    if namespace is not None and not caller.may_read(namespace):
        return Decision(
            False,
            403,
            f"namespace {namespace!r} is not granted to {caller.id!r}; "
            f"ask the operator: bourdon member grant {caller.id} NS",
        )
    if rule == GRANTED and namespace is None:
        return Decision(False, 400, f"{op} needs an agent id")
    return Decision(True, 200, "granted" if namespace else "filtered to granted namespaces")
