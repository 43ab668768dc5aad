"""Replication benchmark (issue: replication through git remotes): one sync, one changed agent.

Two libraries of 20 agents x 1,000 entities x 500 sessions (generated) share a bare repository
served by ``git daemon`` on 127.0.0.1 (git://, a real network transport on loopback). Each run
edits one entity of one agent on the laptop (not timed), then times the laptop's ``sync``
(fetch, publish, push) and the desktop's ``sync`` (fetch, integrate the one changed agent).
Target: each <= 2 s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from common import summarize, write

from bourdon.replicate.remotes import add_remote
from bourdon.replicate.sync import sync
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library
from bourdon.testing.remotes import bare_repository, git_daemon
from bourdon.testing.serving import free_port

RUNS = 10


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare_repository(root / "served" / "team.git")
        with git_daemon(root / "served", free_port()) as url:
            laptop = make_large_library(root / "laptop")
            desktop = Library.init(root / "desktop", machine="desktop")
            for library in (laptop, desktop):
                add_remote(library, "origin", url + "team.git")
            start = time.perf_counter()
            sync(laptop, "origin")
            first_push = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            sync(desktop, "origin")
            first_pull = (time.perf_counter() - start) * 1000
            send, receive = [], []
            rows = laptop.read("agent-07").data["known_entities"]
            shared = [r["name"] for r in rows if r.get("visibility") != "private"]
            for n in range(RUNS):
                change = {"known_entities": [{"name": shared[n], "summary": f"edited {n}"}]}
                laptop.commit("agent-07", change, provenance=Provenance(caller="bench"))
                start = time.perf_counter()
                sent = sync(laptop, "origin")
                send.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                got = sync(desktop, "origin")
                receive.append((time.perf_counter() - start) * 1000)
                assert [s.agent_id for s in sent.sent] == ["agent-07"], sent
                assert [r.agent_id for r in got.received] == ["agent-07"], got
            laptop.close()
            desktop.close()
    results = {
        "sync_send_one_changed_agent": summarize(send),
        "sync_receive_one_changed_agent": summarize(receive),
        "first_sync": {"push_ms": round(first_push, 1), "pull_ms": round(first_pull, 1)},
        "library": {"agents": 20, "entities_per_agent": 1000, "sessions_per_agent": 500},
        "transport": "git:// on 127.0.0.1 (git daemon)",
    }
    return write(
        "sync",
        results,
        {
            "sync_send_one_changed_agent.p50_ms": 2000,
            "sync_receive_one_changed_agent.p50_ms": 2000,
        },
    )


if __name__ == "__main__":
    main()
