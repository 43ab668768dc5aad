"""Web view benchmark (issue 17): each page's server time on the large library.

Library: 20 agents x 1,000 entities x 500 sessions (generated), plus a quarantined member
(``desk``) granted two of the agents holding the measured entity, one write of it waiting in
staging, and one small commit (three summaries changed) whose diff page is measured.

Measured in-process: the real web app (``WebApp`` over ``create_server(root, watch=False)``),
driven through httpx2's ASGI transport with sessions opened by ``web.sessions.open``. Server time
is the time inside the app, from the request's arrival to the last byte of its answer (a clock
around the ASGI call), so the HTTP client's own work is not counted and no socket is involved;
the CPU time spent in that call (the process's threads and the git commands it ran) is reported
too (``cpu_p50_ms``), with the load average before and after, since other work on the machine
stretches the wall-clock figures.
Each page gets ``WARMUP`` requests, then ``RUNS`` timed ones, as the operator at team level and
as the member. Target: each page p50 <= 50 ms. A page that is not there (404 Not Found from the
router, not the web view's own 404 page) is reported as ``missing``, one that answers another
error as ``failed``; both miss the target. The diff of an agent's first commit (its whole
manifest: 1,500 rows added) is also timed, for information, without a target.

``python bench/bench_web.py [runs]`` (default 30).
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import httpx2
from common import RESULTS, summarize, write

from bourdon.access.callers import Caller
from bourdon.access.trust import MemberRegistry
from bourdon.model import Visibility
from bourdon.query.index import Index
from bourdon.serve.server import create_server
from bourdon.serve.web.app import WebApp
from bourdon.serve.web.sessions import COOKIE, Session
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library

RUNS = 30
WARMUP = 3
TARGET_MS = 50.0
MEMBER = "desk"
SEARCH_WORD = "atlas"  # a tag and a summary word of about one row in thirteen
INFORMATION = ("history_diff_first_commit",)  # timed, without a target
ROUTER_404 = "Not Found"  # Starlette's body when no route matches


@dataclass
class Setup:
    """What the pages are asked about, chosen from the generated library and written down."""

    agent: str  # granted to the member: its agent pages, its small commit, its staged write
    grants: list[str]
    entity: str
    holders: list[str]
    session_filter: str
    filter_matches: int  # the agent's team-level sessions the filter keeps
    versions: list[str] = field(default_factory=list)  # the agent's commits, newest first


def cpu_seconds() -> float:
    """CPU time of this process (every thread: tools run some work in worker threads) and of
    its children that ended (the git commands the tools run)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class Clocked:
    """The app, keeping the time the last request spent inside it (ms): wall-clock, and the
    CPU time spent on it (``cpu_seconds``), which a busy machine inflates less."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.last_ms = self.last_cpu_ms = 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        start, cpu = time.perf_counter(), cpu_seconds()
        await self.app(scope, receive, send)
        self.last_ms = (time.perf_counter() - start) * 1000
        self.last_cpu_ms = (cpu_seconds() - cpu) * 1000


def choose(root: Path) -> Setup:
    """The entity held by the most agents at team level, two of its holders as the member's
    grants, and the commonest word of the first one's team-level sessions as the filter."""
    index = Index(root)
    index.refresh()
    team = int(Visibility.TEAM)
    held: dict[str, list[str]] = {}
    for agent_id, view in sorted(index.agents.items()):
        for row in view.entities:
            if row.visibility <= team:
                held.setdefault(row.name, []).append(agent_id)
    entity, holders = min(held.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    grants = holders[:2] if len(holders) > 1 else [holders[0], "agent-00"]
    words: Counter[str] = Counter()
    for s in index.agents[grants[0]].sessions:
        if s.visibility <= team:
            text = " ".join((*s.project_focus, *s.key_actions)).lower()
            words.update(set(re.findall(r"[a-z]+", text)) - {"worked", "on"})
    word, matches = words.most_common(1)[0]
    return Setup(grants[0], grants, entity, holders, word, matches)


def prepare(root: Path, setup: Setup) -> None:
    """One small commit of ``setup.agent`` and one write of it staged by the member."""
    index = Index(root)
    index.refresh()
    team = int(Visibility.TEAM)
    names = [r.name for r in index.agents[setup.agent].entities if r.visibility <= team][:4]
    library = Library.open(root)
    try:
        edit = [{"name": n, "summary": f"Reworded for the web bench: {n}."} for n in names[:3]]
        who = Provenance(caller="bench", session="web-bench")
        library.commit(setup.agent, {"known_entities": edit}, provenance=who)
        staged = [
            {"name": names[3], "summary": "A change the operator reviews."},
            {"name": "web-bench-new-1", "type": "project", "summary": "A new row, staged."},
            {"name": "web-bench-new-2", "type": "decision", "summary": "Another new row."},
        ]
        library.stage(
            MEMBER,
            setup.agent,
            {"known_entities": staged},
            provenance=Provenance(caller=MEMBER, session="web-bench"),
        )
        setup.versions = [v.version_id for v in library.history(setup.agent, limit=None)]
    finally:
        library.close()


def query(path: str, **args: Any) -> str:
    return f"{path}?{urlencode(args)}"


def fixed_paths(setup: Setup) -> dict[str, str]:
    """The pages whose address the URL contract fixes, in the order they are measured."""
    agent = f"/ui/agents/{quote(setup.agent)}"
    return {
        "library": "/ui/",
        "agent_entities": query(agent, kind="entities"),
        "agent_sessions_filtered_page2": query(
            agent, kind="sessions", q=setup.session_filter, page=2
        ),
        "entity": query("/ui/entity", name=setup.entity),
        "search": query("/ui/search", q=SEARCH_WORD),
        "history_all": "/ui/history",
        "history_agent": query("/ui/history", agent=setup.agent),
        "staging": "/ui/staging",
    }


def links(html: str, prefix: str) -> list[str]:
    """The distinct ``href``s of a page that start with ``prefix``, in page order."""
    found = (unescape(h) for h in re.findall(r'href="([^"]+)"', html))
    return list(dict.fromkeys(h for h in found if h.startswith(prefix)))


class Client:
    """GETs into the app with one session's cookie; each answer with its server time."""

    def __init__(self, app: Clocked, http: httpx2.AsyncClient, session: Session) -> None:
        self.app, self.http = app, http
        self.cookie = {"cookie": f"{COOKIE}={session.id}"}

    async def get(self, path: str) -> tuple[httpx2.Response, float, float]:
        answer = await self.http.get(path, headers=self.cookie)
        return answer, self.app.last_ms, self.app.last_cpu_ms


async def discovered_paths(client: Client, setup: Setup) -> dict[str, str]:
    """The diff and staged-write pages, as the history and staging pages link them (their
    address holds a version or a stager the pages choose); the contract's shape if they do not
    answer yet."""
    agent = quote(setup.agent)
    history, *_ = await client.get(query("/ui/history", agent=setup.agent))
    diffs = links(history.text, f"/ui/history/{agent}/") if history.status_code == 200 else []
    staging, *_ = await client.get("/ui/staging")
    staged = links(staging.text, f"/ui/staging/{agent}") if staging.status_code == 200 else []
    staged = [s for s in staged if not s.endswith(("/promote", "/reject"))]
    return {
        "history_diff": diffs[0] if diffs else f"/ui/history/{agent}/{setup.versions[0]}",
        "history_diff_first_commit": (
            diffs[-1] if len(diffs) > 1 else f"/ui/history/{agent}/{setup.versions[-1]}"
        ),
        "staged_write": staged[0] if staged else query(f"/ui/staging/{agent}", member=MEMBER),
    }


def said(answer: httpx2.Response) -> str:
    """What an error page says, in a line."""
    found = re.search(r'role="alert">(.*?)</p>', answer.text, re.S)
    text = unescape(found.group(1)) if found else answer.text
    return " ".join(text.split())[:200]


async def time_page(client: Client, path: str, runs: int) -> dict[str, Any]:
    """``path``'s server time over ``runs`` requests after the warm-up; a page that does not
    answer 200 is not timed: it is ``missing`` (no route) or ``failed`` (an error page)."""
    first, *_ = await client.get(path)
    if first.status_code != 200:
        missing = first.status_code == 404 and first.text.strip() == ROUTER_404
        key = "missing" if missing else "failed"
        return {"path": path, key: True, "status": first.status_code, "said": said(first)}
    for _ in range(WARMUP - 1):
        await client.get(path)
    samples, cpu, errors = [], [], 0
    for _ in range(runs):
        answer, ms, cpu_ms = await client.get(path)
        errors += answer.status_code != 200
        samples.append(ms)
        cpu.append(cpu_ms)
    return {
        "path": path,
        **summarize(samples),
        "cpu_p50_ms": round(statistics.median(cpu), 3),
        "bytes": len(first.content),
        "errors": errors,
    }


async def measure_all(server: Any, setup: Setup, token: str, runs: int) -> dict[str, Any]:
    registry = server.bourdon_guard.registry
    web = WebApp(server, registry)
    member = registry.authenticate(token)
    if member is None:
        raise RuntimeError("the bench member's token does not authenticate")
    sessions = {
        "operator": web.sessions.open(Caller.operator()),
        "member": web.sessions.open(member.caller(), member.token_sha256),
    }
    app = Clocked(web)
    transport = httpx2.ASGITransport(app=app)
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:7510") as http:
        clients = {who: Client(app, http, s) for who, s in sessions.items()}
        pages = {**fixed_paths(setup), **await discovered_paths(clients["operator"], setup)}
        for who, client in clients.items():
            for page, path in pages.items():
                entry = await time_page(client, path, runs)
                if page not in INFORMATION:
                    entry["target_ms"] = TARGET_MS
                    entry["met"] = entry.get("p50_ms", float("inf")) <= TARGET_MS
                out[f"{who}_{page}"] = entry
                print(f"  {who:<8} {page:<30} {_line(entry)}", flush=True)
    return out


def _line(entry: dict[str, Any]) -> str:
    if "p50_ms" in entry:
        times = f"p50 {entry['p50_ms']:8.2f} ms  p99 {entry['p99_ms']:8.2f} ms"
        return f"{times}  cpu {entry['cpu_p50_ms']:8.2f} ms  {entry['path']}"
    if entry.get("missing"):
        return f"MISSING {entry['status']} {entry['path']}"
    return f"FAILED {entry['status']} {entry['path']}: {entry['said']}"


def main(runs: int = RUNS) -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-") as tmp:
        root, home = Path(tmp) / "lib", Path(tmp) / "home"
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        make_large_library(root, 20, 1000, 500).close()
        built_s = time.perf_counter() - started
        setup = choose(root)
        prepare(root, setup)
        home.mkdir()
        token = MemberRegistry(home).add(MEMBER, "quarantined", setup.grants)
        server = create_server(root, watch=False, home=home, peers_file=False)
        try:
            pages = anyio.run(measure_all, server, setup, token, runs)
        finally:
            server.bourdon_guard.library.close()
    results: dict[str, Any] = {
        "library": {
            "agents": 20,
            "entities_per_agent": 1000,
            "sessions_per_agent": 500,
            "built_s": round(built_s, 1),
            "member": MEMBER,
            "grants": setup.grants,
            "entity": setup.entity,
            "entity_holders": setup.holders,
            "search": SEARCH_WORD,
            "session_filter": setup.session_filter,
            "session_filter_matches": setup.filter_matches,
            "load_1m_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "how": "in-process: WebApp over create_server through httpx2's ASGI transport; "
            "server time = the ASGI call, arrival to last byte; cpu = the CPU time in it "
            "(the process's threads and the git commands it ran)",
        },
        **pages,
    }
    timed = {k: v for k, v in pages.items() if "target_ms" in v and "p50_ms" in v}
    absent = [k for k, v in pages.items() if "target_ms" in v and "p50_ms" not in v]
    doc = write("web", results, {f"{k}.p50_ms": TARGET_MS for k in timed})
    if absent:
        # A page not there or failing misses its target: the run is not ok, and says which.
        doc["ok"] = False
        doc["not_measured"] = absent
        (RESULTS / "web.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        for key in absent:
            print(f"  MISS {key:<40} {'missing' if pages[key].get('missing') else 'failed'}")
    return doc


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]])
