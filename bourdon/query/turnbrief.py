"""``compile_turn``: the agent-neutral turn brief, ranked from the in-memory index.

Candidates come from a list of sources (``SOURCES``), each a function of one ``Turn`` (the
prompt, the working folder, the caller's access and what recognition found) that returns
scored ``Candidate`` rows the caller may see; ranking merges them, best score first, keeps
``max_items`` (clamped 1..20) and the renderers of ``bourdon.query.turnformats`` drop whole
items, never part of a line, until the rendering fits ``max_chars`` (clamped 320..8000). Both
applied bounds are reported. Recognition and the folder's sessions come from the index alone;
only a prompt they find nothing for is searched (the library's search file, brought up to date
first when a write changed it). Rows that do not hold today (``bourdon.query.validity``) never
appear, since recognition leaves them out.

The answer has the reference's keys (``schema_version``, ``agent_id``, ``routing``, ``brief``,
``items``); ``verbose`` adds the full brief: every format's rendering and the scoring trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Final, NamedTuple

from bourdon.access.visibility import OPEN, Access, Scope, resolve
from bourdon.errors import InputError
from bourdon.model import fold
from bourdon.query.answer import meta
from bourdon.query.context import MAX_AGENT, one_line
from bourdon.query.index import Index
from bourdon.query.mentions import CONFIDENCE_RANK, MAX_PROMPT, confidence, name_words, recognize
from bourdon.query.rowid import row_id
from bourdon.query.search import search
from bourdon.query.turnformats import FORMATS, render

SCHEMA_VERSION: Final = "bourdon.turn-brief/v1"
MAX_ITEMS: Final = 20
MIN_CHARS, MAX_CHARS = 320, 8000  # the least holds a header and a line that says what was cut
PROJECT_BONUS: Final = 10.0  # an entity that is the working folder's project
# Sessions rank after every entity (the lowest entity match scores 75): they are context.
SESSION_HERE: Final = 45.0  # a session in the same working folder
SESSION_ABOUT: Final = 40.0  # a session whose focus is an entity the prompt names
SESSIONS_PER_SOURCE: Final = 6
# Full-text hits are the weakest evidence (rows whose words the prompt shares): scored under
# every recognition match and folder session, should both ever be asked together.
SEARCH_BASE: Final = 20.0
SEARCH_SPAN: Final = 15.0  # the best hit scores SEARCH_BASE + SEARCH_SPAN
SEARCH_HITS: Final = 4


class Candidate(NamedTuple):
    """One thing the brief may name, with its score and why."""

    kind: str  # entity | session
    name: str
    summary: str
    score: float
    reason: str
    source_agents: tuple[str, ...]
    ids: tuple[str, ...]  # bourdon.query.rowid ids of the rows it stands for
    parts: tuple[tuple[str, float], ...]  # the score, part by part (the verbose trace)
    formerly: tuple[str, ...] = ()


@dataclass(frozen=True)
class Turn:
    """What every candidate source is given: one prompt, one folder, one caller."""

    index: Index
    prompt: str
    cwd: str | None
    project: str | None
    access: Access
    matches: list[dict[str, Any]]  # recognition's groups, best first


Source = Callable[[Turn], list[Candidate]]


def entity_candidates(turn: Turn) -> list[Candidate]:
    """The entities the prompt (or the working folder's name) mentions."""
    found = []
    project = fold(turn.project or "")
    for m in turn.matches:
        here = bool(project) and fold(m["name"]) == project
        parts = [("recognition", float(m["score"]))]
        if here:
            parts.append(("project", PROJECT_BONUS))
        rows = [
            r.row
            for r in turn.index.match(m["name"], fuzzy=False, visible=turn.access.allows)
            if r.kind == "exact"
        ]
        found.append(
            Candidate(
                kind="entity",
                name=m["name"],
                summary=m["summary"] or "",
                score=sum(p for _, p in parts),
                reason="the working folder's project"
                if here
                else f"named in the prompt ({m['match']})",
                source_agents=tuple(m["agents"]),
                ids=tuple(str(row_id(r)) for r in rows),
                parts=tuple(parts),
                formerly=tuple(m.get("formerly") or ()),
            )
        )
    return found


def session_candidates(turn: Turn) -> list[Candidate]:
    """Recent sessions in the working folder, or about an entity the prompt names."""
    named = {fold(m["name"]) for m in turn.matches}
    found: list[Candidate] = []
    if not named and not turn.cwd:
        return found
    for s in turn.index.sessions:  # newest first
        if not turn.access.allows(s):
            continue
        parts = []
        if turn.cwd and s.cwd == turn.cwd:
            parts.append(("same folder", SESSION_HERE))
        about = [f for f in s.project_focus if fold(f) in named] if named else []
        if about:
            parts.append(("about a named entity", SESSION_ABOUT if not parts else 10.0))
        if not parts:
            continue
        focus = ", ".join(s.project_focus[:2]) or (s.cwd and PurePath(s.cwd).name) or "work"
        found.append(
            Candidate(
                kind="session",
                name=f"{s.date or 'undated'} {focus}",
                summary="; ".join(s.key_actions[:3]),
                score=sum(p for _, p in parts),
                reason="earlier work in this folder"
                if parts[0][0] == "same folder"
                else f"earlier work on {about[0]}",
                source_agents=(s.agent,),
                ids=(str(row_id(s)),),
                parts=tuple(parts),
            )
        )
        if len(found) >= SESSIONS_PER_SOURCE:
            break
    return found


def search_candidates(turn: Turn) -> list[Candidate]:
    """Rows whose words the prompt shares (BM25 over what the caller may see), when neither
    recognition nor the working folder found anything: a prompt that names no known entity
    still gets the rows it talks about."""
    if turn.matches or turn.cwd or not turn.prompt.strip():
        return []
    answer = search(turn.index, turn.prompt[:MAX_PROMPT], access=turn.access, top_k=SEARCH_HITS)
    hits = answer["results"]
    best = max((h["score"] for h in hits), default=0.0) or 1.0
    found = []
    for hit in hits:
        data = hit["metadata"]
        label = str(data.get("name") or data.get("date") or "")
        name = label if hit["source"] in ("entity", "workstream") else f"{label} {hit['source']}"
        found.append(
            Candidate(
                kind=hit["source"],
                name=name.strip(),
                summary=hit["snippet"].replace("**", ""),
                score=SEARCH_BASE + SEARCH_SPAN * hit["score"] / best,
                reason="shares words with the prompt",
                source_agents=(data["agent"],),
                ids=(hit["doc_id"],),
                parts=(("full-text match", round(hit["score"], 3)),),
            )
        )
    return found


# Where candidates come from: recognition, the working folder's sessions, full-text search.
SOURCES: Final[tuple[Source, ...]] = (entity_candidates, session_candidates, search_candidates)
KIND_ORDER: Final = {"entity": 0, "session": 1, "workstream": 2, "note": 3}
SLIM_KEYS: Final = ("rank", "kind", "name", "summary", "source_agents")  # the reference's


def ranked(turn: Turn, sources: tuple[Source, ...] = SOURCES) -> list[Candidate]:
    """Every source's candidates, best first (a row named by two sources counts once)."""
    best: dict[tuple[str, str], Candidate] = {}
    for source in sources:
        for c in source(turn):
            key = (c.kind, fold(c.name)) if not c.ids else (c.kind, c.ids[0])
            if key not in best or best[key].score < c.score:
                best[key] = c
    # Ties keep each source's own order: recognition's ranking, sessions newest first.
    return sorted(best.values(), key=lambda c: (-c.score, KIND_ORDER.get(c.kind, 9)))


def compile_turn(
    index: Index,
    prompt: str,
    agent: str = "generic",
    cwd: str | None = None,
    access_level: str | None = "team",
    max_items: int = 6,
    max_chars: int = 1800,
    format: str = "markdown",  # the reference's parameter name
    verbose: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """The turn brief for ``agent``: what the prompt and the working folder point at."""
    chosen = str(format or "markdown").lower()
    if chosen not in FORMATS:
        raise InputError(f"format {format!r} is not one of {', '.join(FORMATS)}")
    access = resolve(access_level, False, default="team", scope=scope)
    items_cap = max(1, min(int(max_items), MAX_ITEMS))
    chars_cap = max(MIN_CHARS, min(int(max_chars), MAX_CHARS))
    text = prompt if isinstance(prompt, str) else ""
    agent_id = one_line(agent or "generic", MAX_AGENT)
    project = PurePath(cwd).name if cwd else None
    matches = recognize(index, f"{text}\n{project or ''}", access)
    turn = Turn(index, text, cwd, project, access, matches)
    candidates = ranked(turn)
    picked = candidates[:items_cap]
    routing = _routing(picked, matches, text)
    head = {"agent_id": agent_id, "routing": routing, "project": project}
    brief, shown = render(chosen, head, [_item(r, c) for r, c in enumerate(picked, 1)], chars_cap)
    items = [_item(rank, c) for rank, c in enumerate(picked[:shown], 1)]
    answer: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "agent_id": agent_id,
        "routing": {"mode": routing["mode"], "confidence": routing["confidence"]},
        "brief": brief,
        "items": [{k: i[k] for k in SLIM_KEYS} for i in items],
        "meta": meta(
            index,
            access,
            format=chosen,
            max_items=items_cap,
            max_chars=chars_cap,
            truncated=len(candidates) > shown,
            candidates=len(candidates),
        ),
    }
    if verbose:
        answer |= {
            "format": chosen,
            "prompt": text[:MAX_PROMPT],
            "cwd": cwd,
            "repo": {"name": project, "root": None, "remote": None},
            "routing": routing,
            "items": items,
            "delivery": {
                "format": chosen,
                "rendered_text": brief,
                "variants": {f: render(f, head, items, chars_cap)[0] for f in FORMATS},
            },
            "trace": {
                "candidates": [
                    {
                        "kind": c.kind,
                        "name": c.name,
                        "score": round(c.score, 1),
                        "parts": dict(c.parts),
                        "selected": n < shown,
                    }
                    for n, c in enumerate(candidates)
                ]
            },
            "diagnostics": {
                "candidate_count": len(candidates),
                "max_items": items_cap,
                "max_chars": chars_cap,
                "access_level": access_level,
                "agent_id": agent_id,
            },
        }
    return answer


def _item(rank: int, c: Candidate) -> dict[str, Any]:
    return {
        "rank": rank,
        "kind": c.kind,
        "name": c.name,
        "summary": c.summary,
        "source_agents": list(c.source_agents),
        "score": round(c.score, 1),
        "reason": c.reason,
        "source": "local",
        "ids": list(c.ids),
        **({"formerly": list(c.formerly)} if c.formerly else {}),
    }


def _routing(picked: list[Candidate], matches: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    """The reference's routing: inject when there is an anchor, with recognition's confidence."""
    if not picked:
        return {"mode": "observe", "confidence": "none", "reason": "no recognition anchors"}
    words = name_words(prompt) if len(prompt) <= 4 * 128 else None
    buckets = [confidence(m, words) for m in matches[:1]]
    top = min(buckets, key=CONFIDENCE_RANK.__getitem__, default="low")
    return {
        "mode": "inject",
        "confidence": top,
        "reason": f"top anchor scored {picked[0].score:.1f}",
    }
