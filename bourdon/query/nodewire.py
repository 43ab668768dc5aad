"""How the graph's nodes look on the wire: their type, name, preview text, project and
metadata, shared by ``expand_neighbors``' neighbours and ``fetch_slice``'s passages.
"""

from __future__ import annotations

from typing import Any

from bourdon.model import Visibility
from bourdon.query.graph import EntityNode, Node, kind_of, project_of
from bourdon.query.rows import NoteRow, SessionRow, WorkstreamRow


def type_of(node: Node) -> str:
    if isinstance(node, EntityNode):
        return next((r.type for r in node.rows if r.type), "entity")
    return kind_of(node)


def name_of(node: Node) -> str:
    if isinstance(node, EntityNode | WorkstreamRow):
        return node.name
    if isinstance(node, SessionRow):
        return f"{node.date} {project_of(node) or node.cwd or ''}".strip()
    return f"{node.date} {node.text[:60]}".strip()


def content_of(node: Node) -> str:
    if isinstance(node, EntityNode):
        return " | ".join(f"{r.agent}: {r.summary}" for r in node.rows if r.summary)
    if isinstance(node, WorkstreamRow):
        return node.summary or ""
    if isinstance(node, SessionRow):
        return "; ".join(node.key_actions) or ", ".join(node.project_focus)
    return node.text


def project_id(node: Node) -> str | None:
    if isinstance(node, SessionRow):
        return project_of(node)
    if isinstance(node, EntityNode):
        return node.name if type_of(node) == "project" else None
    return None


def metadata(node: Node) -> dict[str, Any]:
    if isinstance(node, EntityNode):
        return {
            "agents": [r.agent for r in node.rows],
            "aliases": sorted({a for r in node.rows for a in r.aliases}),
            "types": sorted({r.type for r in node.rows if r.type}),
            "visibility": str(Visibility(max(r.visibility for r in node.rows))),
            "last_touched": max((r.last_touched or "" for r in node.rows), default="") or None,
        }
    out: dict[str, Any] = {"agent": node.agent, "visibility": str(Visibility(node.visibility))}
    if isinstance(node, WorkstreamRow):
        out.update(status=node.status, last_touched=node.last_touched, started=node.started)
    elif isinstance(node, SessionRow):
        out.update(date=node.date, cwd=node.cwd, session_id=node.session_id)
        out["project_focus"] = list(node.project_focus)
    else:
        out.update(date=node.date, related_entities=list(node.related_entities))
        out["tags"] = list(node.tags)
    return out


def breadcrumb(row: Any) -> str:
    if isinstance(row, EntityNode):
        return f"entity / {row.name}"
    if isinstance(row, SessionRow):
        return f"{row.agent} / {project_of(row) or '-'} / {row.date}"
    if isinstance(row, NoteRow):
        return f"{row.agent} / note / {row.date}"
    return f"{row.agent} / {kind_of(row)}"
