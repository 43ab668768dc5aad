"""Peers' search results joined to the local ones, by interleaving ranks (pure).

A peer's BM25 scores are on its own scale (its own rows' statistics), so scores from two
libraries are not compared: the merged list takes the best local result, then each peer's
best, then every list's second, and so on, cut back to the page size. Each peer result is
filtered again on arrival (``answers.seen_at``), checked for shape, and its agent tagged
``peer:<name>:<agent>``; ``meta.matched`` adds what the peers counted.
"""

from __future__ import annotations

from typing import Any

from bourdon.federation.answers import seen_at, tag
from bourdon.federation.client import PeerAnswer
from bourdon.model import Visibility


def _peer_results(answer: PeerAnswer, level: Visibility) -> list[dict[str, Any]]:
    results = (answer.payload or {}).get("results")
    out = []
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict) or seen_at(result, level) is None:
            continue
        data = result.get("metadata")
        data = data if isinstance(data, dict) else {}
        doc_id, score, snippet = result.get("doc_id"), result.get("score"), result.get("snippet")
        if not isinstance(doc_id, str) or not isinstance(snippet, str):
            continue
        if isinstance(score, bool) or not isinstance(score, int | float):
            continue
        seen = seen_at(data, level) if "visibility" in data else level
        if seen is None:
            continue
        metadata = {k: v for k, v in data.items() if k != "visibility"}
        metadata["agent"] = tag(answer.peer, data.get("agent"))
        metadata["peer"] = answer.peer
        source = result.get("source")
        out.append(
            {
                "doc_id": doc_id,
                "score": score,
                "source": source if isinstance(source, str) else "",
                "snippet": snippet,
                "metadata": metadata,
            }
        )
    return out


def merge_search(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    """``search_federation``: local and peer results interleaved by rank, cut to the page."""
    size = int(answer["meta"].get("limit") or len(answer["results"]) or 1)
    lists = [list(answer["results"])]
    counted = 0
    for peer in answers:
        found = _peer_results(peer, level)
        lists.append(found)
        payload = peer.payload or {}
        total = (payload.get("meta") or {}).get("matched", payload.get("total_matches"))
        ok = isinstance(total, int) and not isinstance(total, bool) and total >= len(found)
        counted += total if ok else len(found)  # type: ignore[operator]
    merged: list[dict[str, Any]] = []
    depth = max((len(x) for x in lists), default=0)
    for rank in range(depth):
        merged.extend(x[rank] for x in lists if rank < len(x))
    answer["results"] = merged[:size]
    answer["total_matches"] = len(answer["results"])
    answer["meta"]["matched"] = answer["meta"]["matched"] + counted
    if len(merged) > size:
        answer["truncated"] = True
    answer["meta"]["peer_results"] = sum(1 for r in answer["results"] if "peer" in r["metadata"])
