"""Join the peers to a local answer: ask them depth 1 under the deadline, merge, report.

The one path every federated tool takes after answering from the local library
(``bourdon.serve.guard.Guard.run`` decides whether a call federates at all). The peers are
asked at the level the local answer was served at, never above team and never for private
rows; whatever they say, the answer gains ``peer_meta``'s keys.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from bourdon.federation.answers import Merge, peer_meta
from bourdon.federation.client import Federation, PeerAnswer
from bourdon.model import Visibility

# A merge failure has always been reported under the server's logger name: operators filter
# on it, so it stayed when the merging moved here.
log = logging.getLogger("bourdon.server")

# Federated tools that take no access level: a peer is asked them without one.
UNLEVELED: Final = frozenset({"list_agents"})


def asked_level(local: Mapping[str, Any]) -> Visibility:
    """The level the peers are asked for: the local answer's, never above team."""
    applied = Visibility.parse(local.get("meta", {}).get("access_level", "public"))
    return min(applied, Visibility.TEAM)


def peer_arguments(tool: str, args: Mapping[str, Any], level: Visibility) -> dict[str, Any]:
    """What a peer's ``tool`` is passed: only the arguments it declares (the reference refuses
    any other, even ``None``), the hop that stops it from asking its own peers, the level."""
    ask = {k: v for k, v in args.items() if v is not None} | {"federation_hop": 1}
    if tool not in UNLEVELED:
        ask |= {"access_level": str(level), "include_private": False}
    return ask


async def join_peers(
    federation: Federation,
    tool: str,
    args: Mapping[str, Any],
    local: dict[str, Any],
    merge: Merge,
    deadline: float,
) -> dict[str, Any]:
    """``local`` with what the peers answered to ``tool`` within ``deadline`` seconds."""
    level = asked_level(local)
    answers = await federation.ask(tool, peer_arguments(tool, args, level), deadline)
    snapshot = json.loads(json.dumps(local))
    try:
        merge(local, answers, level)
    except Exception:  # a peer answered in a shape no merge expected: keep the local one
        log.exception("could not merge the peers' answers to %s", tool)
        local = snapshot
        _spoiled(answers)
    local.update(peer_meta(answers))
    return local


def _spoiled(answers: list[PeerAnswer]) -> None:
    for answer in answers:
        if answer.payload is not None:
            answer.error, answer.payload = "answered in an unexpected shape", None
