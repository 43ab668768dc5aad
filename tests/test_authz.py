"""The authorization matrix: every tool and resource x every kind of caller, over real transports.

Callers: the local operator (stdio, in-process), a trusted member, a quarantined member with a
grant, a quarantined member without one, a revoked member and no token at all. The members talk
to ONE real ``bourdon serve --transport http`` subprocess on 127.0.0.1 shared by the module.

The expectation table below is written from the rules of the ``policy`` docstring, not from its
``QUARANTINED_RULES`` table: trusted callers (and the operator) may do everything; quarantined
ones get filtered reads, reads of granted namespaces and of their own, staged writes under their
own id only, no rollback, and ``describe_caller``; a revoked member or a request without a token
is stopped at the HTTP door with 401.

Then: canary strings planted in a namespace the quarantined members were not granted must never
reach them, whatever they call; private rows never leave the machine; quarantined writes wait in
staging; rotation and revocation take effect on the next request; the audit log holds one record
per call and no token text.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.access.audit import AuditLog
from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 20.0  # seconds, for any one call
HEX = secrets.token_hex(4)  # makes this run's canaries unique

# -- namespaces and members ----------------------------------------------------------------

ATLAS = "atlas"  # granted to the quarantined member DESK
VAULT = f"vault-{HEX}"  # granted to nobody: holds the canaries
BROKEN = f"sunk-{HEX}"  # an invalid manifest file, granted to nobody
DESK = "desk-chat"  # quarantined member, grants [ATLAS, GHOST]; also a live agent
NOGRANT = "no-grant"  # quarantined member without grants; also a live agent
GHOST = "ghost-ns"  # granted to DESK, but no such agent exists
TRUSTED = "ops-laptop"  # trusted member
GONE = "gone"  # trusted member, revoked while the server runs
ROTOR = "rotor"  # quarantined member whose token is rotated
AUDITOR = "auditor"  # quarantined member whose calls are counted in the audit log
SHARED = "atlas-core"  # a name both ATLAS and VAULT use (entity, project focus, workstream)

TODAY = date.today()
RECENT = (TODAY - timedelta(days=2)).isoformat()
OLDER = (TODAY - timedelta(days=40)).isoformat()

# Every string a reader of VAULT (or of the broken file) could learn. None may reach a
# quarantined member in any answer, error or warning.
CANARY_FIELDS = (
    "instance role capability teamtag privtag "
    "entpub enttype alias entsummary enttag entsrc entmachine "
    "entteam teamalias teamsummary teamtag2 "
    "sharedsummary sharedtag sharedalias sharedtype "
    "sessid cwd focus action file sesstag "
    "tsessid tcwd tfocus taction tfile "
    "wsname wssummary wsrel wstag sharedwssummary "
    "notetext noterel notetag tnotetext"
).split()
CAN = {f: f"cnry{f}{HEX}" for f in CANARY_FIELDS}
CANARIES = {*CAN.values(), VAULT, BROKEN}

# Private rows of the granted namespace ATLAS: no caller over HTTP may ever see them.
PRIV = {f: f"prv{f}{HEX}" for f in ("entname", "entsummary", "alias", "tag", "notetext", "ptag")}


def src(name: str, machine: str = "m1") -> dict[str, str]:
    return {"kind": "sample", "name": name, "machine": machine}


def vault_manifest() -> dict[str, Any]:
    c = CAN
    return {
        "spec_version": "0.1",
        "agent": {"id": VAULT, "type": "other", "instance": c["instance"], "role_narrative": c["role"]},
        "last_updated": "2026-11-30T00:00:00Z",
        "capabilities": [c["capability"]],
        "visibility_policy": {"default": "team", "team_tags": [c["teamtag"]], "private_tags": [c["privtag"]]},
        "known_entities": [
            {"name": c["entpub"], "type": c["enttype"], "aliases": [c["alias"]], "summary": c["entsummary"],
             "tags": [c["enttag"]], "last_touched": RECENT, "visibility": "public",
             "source": src(c["entsrc"], c["entmachine"])},
            {"name": c["entteam"], "type": "project", "aliases": [c["teamalias"]], "summary": c["teamsummary"],
             "tags": [c["teamtag2"]], "last_touched": RECENT, "visibility": "team"},
            {"name": SHARED, "type": c["sharedtype"], "aliases": [c["sharedalias"]],
             "summary": c["sharedsummary"], "tags": [c["sharedtag"]], "last_touched": RECENT,
             "visibility": "public"},
        ],
        "recent_sessions": [
            {"date": RECENT, "session_id": c["sessid"], "cwd": c["cwd"], "project_focus": [c["focus"], SHARED],
             "key_actions": [c["action"]], "files_touched": [c["file"]], "tags": [c["sesstag"]],
             "visibility": "public"},
            {"date": RECENT, "session_id": c["tsessid"], "cwd": c["tcwd"], "project_focus": [c["tfocus"], SHARED],
             "key_actions": [c["taction"]], "files_touched": [c["tfile"]], "visibility": "team"},
        ],
        "known_workstreams": [
            {"name": c["wsname"], "status": "active", "summary": c["wssummary"],
             "related_entities": [c["wsrel"], SHARED], "tags": [c["wstag"]], "started": OLDER,
             "last_touched": RECENT, "visibility": "public"},
            {"name": SHARED, "status": "active", "summary": c["sharedwssummary"],
             "related_entities": [SHARED], "started": OLDER, "last_touched": RECENT, "visibility": "team"},
        ],
        "notes": [
            {"date": RECENT, "text": c["notetext"], "related_entities": [c["noterel"], SHARED],
             "tags": [c["notetag"]], "visibility": "public"},
            {"date": RECENT, "text": c["tnotetext"], "related_entities": [SHARED], "visibility": "team"},
        ],
    }


def atlas_manifest() -> dict[str, Any]:
    return {
        "spec_version": "0.1",
        "agent": {"id": ATLAS, "type": "code-assistant", "instance": "atlas-box"},
        "last_updated": "2026-11-30T00:00:00Z",
        "visibility_policy": {"default": "team", "private_tags": [PRIV["ptag"]]},
        "known_entities": [
            {"name": SHARED, "type": "project", "aliases": ["acore"], "summary": "The atlas core service.",
             "tags": ["core"], "last_touched": RECENT, "visibility": "public"},
            {"name": "harbor-gateway", "type": "project", "summary": "Gateway in front of atlas.",
             "last_touched": RECENT, "visibility": "team"},
        ],
        "recent_sessions": [
            {"date": RECENT, "session_id": "atlas-s1", "cwd": "/src/atlas", "project_focus": [SHARED],
             "key_actions": ["tune the core"], "visibility": "public"},
        ],
        "known_workstreams": [
            {"name": SHARED, "status": "active", "summary": "Atlas core rewrite.", "related_entities": [SHARED],
             "started": OLDER, "last_touched": RECENT, "visibility": "team"},
        ],
        "notes": [
            {"date": RECENT, "text": "atlas note about the core", "related_entities": [SHARED],
             "visibility": "team"},
        ],
    }


ATLAS_PRIVATE_CHANGE = {
    "known_entities": [
        {"name": PRIV["entname"], "type": "person", "aliases": [PRIV["alias"]], "summary": PRIV["entsummary"],
         "tags": [PRIV["tag"]], "last_touched": RECENT, "visibility": "private"},
    ],
    "notes": [{"date": RECENT, "text": PRIV["notetext"], "related_entities": [SHARED], "visibility": "private"}],
}


def small_manifest(agent_id: str) -> dict[str, Any]:
    return {
        "spec_version": "0.1",
        "agent": {"id": agent_id, "type": "other"},
        "last_updated": "2026-11-30T00:00:00Z",
        "known_entities": [{"name": f"{agent_id}-row", "summary": "own row", "visibility": "public"}]
        + [{"name": f"forget-me-{who}", "visibility": "public"} for who in FORGETTERS],
    }


def build_library(root: Path) -> dict[str, str]:
    """The library of this module; returns version ids and digests the calls need."""
    fixture = Provenance(caller="fixture")
    library = Library.init(root)
    try:
        library.import_manifest(yamlio.dump(atlas_manifest()), what=ATLAS, provenance=fixture)
        library.commit(ATLAS, ATLAS_PRIVATE_CHANGE, provenance=fixture)
        library.import_manifest(yamlio.dump(vault_manifest()), what=VAULT, provenance=fixture)
        for agent_id in (DESK, NOGRANT):
            library.import_manifest(yamlio.dump(small_manifest(agent_id)), what=agent_id, provenance=fixture)
        atlas = library.history(ATLAS)  # newest first
        ctx = {
            "ATLAS_V1": atlas[-1].version_id,  # before the private rows
            "ATLAS_D2": atlas[0].digest8 or "",  # the write that added the private rows
            "VAULT_V1": library.history(VAULT)[-1].version_id,
            "VAULT_D1": library.history(VAULT)[0].digest8 or "",
            "DESK_V1": library.history(DESK)[-1].version_id,
        }
    finally:
        library.close()
    # An invalid manifest of an agent nobody was granted: its name shows up in warnings.
    (root / "agents" / f"{BROKEN}.l5.yaml").write_text("agent: [broken\n", encoding="utf-8")
    return ctx


# -- the server ----------------------------------------------------------------------------


@dataclass
class Served:
    root: Path
    home: Path  # BOURDON_HOME: federation.yaml, audit.jsonl
    port: int
    tokens: dict[str, str]
    ctx: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("authz")
    root, user = base / "lib", base / "user"
    ctx = build_library(root)
    home = user / ".bourdon"
    registry = MemberRegistry(home)
    tokens = {
        TRUSTED: registry.add(TRUSTED, "trusted"),
        DESK: registry.add(DESK, "quarantined", [ATLAS, GHOST]),
        NOGRANT: registry.add(NOGRANT, "quarantined"),
        GONE: registry.add(GONE, "trusted"),
        ROTOR: registry.add(ROTOR, "quarantined", [ATLAS]),
        AUDITOR: registry.add(AUDITOR, "quarantined", [ATLAS]),
    }
    server = Served(root, home, free_port(), tokens, ctx)
    out, err = base / "server.stdout", base / "server.stderr"
    server.logs = [out, err]
    with open(out, "wb") as o, open(err, "wb") as e:
        server.proc = subprocess.Popen(
            [sys.executable, "-m", "bourdon", "--library", str(root), "serve", "--transport", "http",
             "--host", "127.0.0.1", "--port", str(server.port), "--no-watch"],
            env=child_env(user), stdout=o, stderr=e, stdin=subprocess.DEVNULL,
        )
    try:
        wait_for_port(server.proc, server.port, log=err)
        yield server
    finally:
        server.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP with a bearer token (no response cache).

    Every HTTP exchange is bounded by the httpx timeout; every call by ``ask``'s own.
    """
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers, timeout=httpx2.Timeout(CALL_TIMEOUT)) as hc,
        Client(streamable_http_client(url, http_client=hc), cache=None) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def operator_client(server: Served) -> AsyncIterator[Client]:
    """The local operator: the server in-process, no transport, no token."""
    async with Client(create_server(server.root, watch=False, home=server.home), cache=None) as client:
        yield client


# -- calls ---------------------------------------------------------------------------------

Spec = tuple[str, str, dict[str, Any]]  # ("tool", name, arguments) or ("resource", uri, {})


def tool(tool_name: str, /, **args: Any) -> Spec:
    return ("tool", tool_name, args)


def resource(uri: str) -> Spec:
    return ("resource", uri, {})


def fill(value: Any, ctx: dict[str, str]) -> Any:
    """Replace ``{KEY}`` placeholders by this run's version ids and digests."""
    if isinstance(value, str):
        for key, real in ctx.items():
            value = value.replace("{" + key + "}", real)
        return value
    if isinstance(value, dict):
        return {k: fill(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, ctx) for v in value]
    if isinstance(value, tuple):
        return tuple(fill(v, ctx) for v in value)
    return value


def note(text: str) -> list[dict[str, str]]:
    return [{"date": RECENT, "text": text}]


# Outcomes: A allowed (an answer), L a live write, S a staged write, D denied (403),
# U stopped at the HTTP door (401), N not found (404: the caller may look, nothing is there).
A, L, S, D, U, N = "ok", "live", "staged", 403, 401, 404
CALLERS = ("operator", "trusted", "q_grant", "q_nogrant", "revoked", "no_token")
# Each caller that may forget has its own entity to forget in DESK's manifest.
FORGETTERS = ("operator", TRUSTED, DESK, NOGRANT, GONE, "none")

# One row per call. Columns: operator (stdio), trusted, quarantined with grant (DESK, granted
# ATLAS and GHOST), quarantined without grant (NOGRANT), revoked member, no token.
MATRIX: list[tuple[str, Spec, tuple[Any, ...]]] = [
    ("find_entity shared name", tool("find_entity", name=SHARED), (A, A, A, A, U, U)),
    ("find_entity vault name (team)", tool("find_entity", name=CAN["entteam"], access_level="team"), (A, A, A, A, U, U)),
    ("query_agent_memory granted", tool("query_agent_memory", agent=ATLAS, topic=SHARED), (A, A, A, D, U, U)),
    ("query_agent_memory not granted", tool("query_agent_memory", agent=VAULT, topic=SHARED), (A, A, D, D, U, U)),
    ("query_agent_memory own (DESK)", tool("query_agent_memory", agent=DESK, topic="x"), (A, A, A, D, U, U)),
    ("query_agent_memory own (NOGRANT)", tool("query_agent_memory", agent=NOGRANT, topic="x"), (A, A, D, A, U, U)),
    ("query_agent_memory granted, absent", tool("query_agent_memory", agent=GHOST, topic="x"), (N, N, N, D, U, U)),
    ("query_agent_memory unknown", tool("query_agent_memory", agent="nobody-here", topic="x"), (N, N, D, D, U, U)),
    ("get_cross_agent_summary", tool("get_cross_agent_summary", project=SHARED, access_level="team"), (A, A, A, A, U, U)),
    ("list_recent_work all", tool("list_recent_work", since="2000-01-01", access_level="team"), (A, A, A, A, U, U)),
    ("list_recent_work granted", tool("list_recent_work", agent=ATLAS, since="2000-01-01"), (A, A, A, D, U, U)),
    ("list_recent_work not granted", tool("list_recent_work", agent=VAULT, since="2000-01-01"), (A, A, D, D, U, U)),
    ("list_workstreams all", tool("list_workstreams", access_level="team"), (A, A, A, A, U, U)),
    ("list_workstreams not granted", tool("list_workstreams", agent=VAULT), (A, A, D, D, U, U)),
    ("list_notes all", tool("list_notes", since="2000-01-01", access_level="team"), (A, A, A, A, U, U)),
    ("list_notes granted", tool("list_notes", agent=ATLAS, since="2000-01-01"), (A, A, A, D, U, U)),
    ("list_notes not granted", tool("list_notes", agent=VAULT, since="2000-01-01"), (A, A, D, D, U, U)),
    ("list_agents", tool("list_agents"), (A, A, A, A, U, U)),
    ("export_agents", tool("export_agents"), (A, A, A, A, U, U)),
    ("trace_entity", tool("trace_entity", entity=SHARED), (A, A, A, A, U, U)),
    ("list_memory_versions granted", tool("list_memory_versions", agent_id=ATLAS), (A, A, A, D, U, U)),
    ("list_memory_versions not granted", tool("list_memory_versions", agent_id=VAULT), (A, A, D, D, U, U)),
    ("list_memory_versions own (DESK)", tool("list_memory_versions", agent_id=DESK), (A, A, A, D, U, U)),
    ("explain_memory_change granted", tool("explain_memory_change", agent_id=ATLAS, digest="{ATLAS_D2}"), (A, A, A, D, U, U)),
    ("explain_memory_change not granted", tool("explain_memory_change", agent_id=VAULT, digest="{VAULT_D1}"), (A, A, D, D, U, U)),
    ("rollback preview granted", tool("rollback_agent_memory", agent_id=ATLAS, version_id="{ATLAS_V1}", dry_run=True), (A, A, D, D, U, U)),
    ("rollback preview own (DESK)", tool("rollback_agent_memory", agent_id=DESK, version_id="{DESK_V1}", dry_run=True), (A, A, D, D, U, U)),
    ("rollback preview not granted", tool("rollback_agent_memory", agent_id=VAULT, version_id="{VAULT_V1}", dry_run=True), (A, A, D, D, U, U)),
    ("commit own (DESK)", tool("commit_to_federation", agent_id=DESK, notes=note("matrix {CALLER}")), (L, L, S, D, U, U)),
    ("commit own (NOGRANT)", tool("commit_to_federation", agent_id=NOGRANT, notes=note("matrix {CALLER}")), (L, L, D, S, U, U)),
    ("commit granted, not own", tool("commit_to_federation", agent_id=ATLAS, notes=note("matrix {CALLER}")), (L, L, D, D, U, U)),
    ("commit not granted", tool("commit_to_federation", agent_id=VAULT, notes=note("matrix {CALLER}")), (L, L, D, D, U, U)),
    ("forget own (DESK)", tool("forget", name="forget-me-{CALLER}", agent_id=DESK), (L, L, S, D, U, U)),
    ("forget not own", tool("forget", name="forget-me-{CALLER}", agent_id=ATLAS), (N, N, D, D, U, U)),
    ("describe_caller", tool("describe_caller"), (A, A, A, A, U, U)),
    ("memory_status", tool("memory_status"), (A, A, A, A, U, U)),
    ("search_federation", tool("search_federation", query=SHARED), (A, A, A, A, U, U)),
    ("search_federation not granted", tool("search_federation", query=SHARED, agent=VAULT), (A, A, D, D, U, U)),
    ("resource agents", resource("agent-library://agents"), (A, A, A, A, U, U)),
    ("resource memory granted", resource(f"agent-library://agents/{ATLAS}/memory"), (A, A, A, D, U, U)),
    ("resource memory not granted", resource(f"agent-library://agents/{VAULT}/memory"), (A, A, D, D, U, U)),
    ("resource memory own (DESK)", resource(f"agent-library://agents/{DESK}/memory"), (A, A, A, D, U, U)),
    ("resource memory own (NOGRANT)", resource(f"agent-library://agents/{NOGRANT}/memory"), (A, A, D, A, U, U)),
    ("resource memory granted, absent", resource(f"agent-library://agents/{GHOST}/memory"), (N, N, N, D, U, U)),
    ("resource entity shared", resource(f"agent-library://entities/{SHARED}"), (A, A, A, A, U, U)),
    ("resource entity vault name", resource(f"agent-library://entities/{CAN['entpub']}"), (A, A, A, A, U, U)),
]

# Extra reads aimed at the canaries (all allowed for every member; answers filtered).
CANARY_PROBES: list[Spec] = [
    tool("search_federation", query=f"{SHARED} {CAN['entsummary']} {CAN['sharedsummary']}", top_k=50),
    tool("search_federation", query=f"{CAN['teamsummary']} {CAN['notetext']} {CAN['action']}", access_level="team"),
    tool("search_federation", query=f"{PRIV['entsummary']} {PRIV['notetext']}", access_level="private", include_private=True),
    tool("find_entity", name=CAN["entpub"]),
    tool("find_entity", name=CAN["entpub"], access_level="team"),
    tool("find_entity", name=CAN["entpub"][:-1] + "q", access_level="team"),  # a near miss
    tool("find_entity", name=CAN["alias"], access_level="team"),
    tool("find_entity", name=CAN["teamalias"], access_level="team"),
    tool("find_entity", name=CAN["sharedalias"], access_level="team"),
    tool("find_entity", name=SHARED, access_level="team"),
    tool("find_entity", name=SHARED, access_level="private", include_private=True),
    tool("get_cross_agent_summary", project=SHARED),
    tool("trace_entity", entity=SHARED, access_level="private", include_private=True),
    tool("trace_entity", entity=CAN["entpub"]),
    tool("trace_entity", entity=CAN["alias"]),
    tool("get_cross_agent_summary", project=CAN["focus"], access_level="team"),
    tool("get_cross_agent_summary", project=CAN["entteam"], access_level="team"),
    tool("list_recent_work", since="2000-01-01"),
    tool("list_recent_work", since="2000-01-01", access_level="team", summary=True),
    tool("list_recent_work"),
    tool("list_recent_work", agent=GHOST),  # a 404 whose message lists the known agents
    tool("list_notes", since="2000-01-01"),
    tool("list_notes", since="2000-01-01", access_level="private", include_private=True),
    tool("list_workstreams", status="active", access_level="team"),
    tool("list_workstreams", access_level="private", include_private=True),
    tool("query_agent_memory", agent=ATLAS, topic=SHARED, access_level="team"),
    tool("query_agent_memory", agent=ATLAS, topic=CAN["entpub"], access_level="team"),
    tool("query_agent_memory", agent=VAULT, topic=CAN["entteam"], access_level="team"),
    tool("list_agents", federation_hop=1),
    tool("expand_neighbors", name=SHARED, depth=3, limit=24),
    tool("expand_neighbors", name=[SHARED, "nobody-here"], depth=3, access_level="team"),
    tool("fetch_slice", kind="entity", id=SHARED, window=64, access_level="team"),
    resource(f"agent-library://entities/{CAN['entteam']}"),
    resource(f"agent-library://entities/{CAN['sharedalias']}"),
    resource(f"agent-library://agents/{BROKEN}/memory"),
]

# Reads a member could use to ask for private rows (all must be answered at team at most).
PRIVATE_PROBES: list[Spec] = [
    tool("find_entity", name=PRIV["entname"], access_level="private", include_private=True),
    tool("find_entity", name=PRIV["alias"], access_level="private", include_private=True),
    tool("query_agent_memory", agent=ATLAS, topic=PRIV["entname"], access_level="private", include_private=True),
    tool("get_cross_agent_summary", project=SHARED, access_level="private", include_private=True),
    tool("list_notes", agent=ATLAS, since="2000-01-01", access_level="private", include_private=True),
    tool("expand_neighbors", name=SHARED, depth=3, limit=24, access_level="private", include_private=True),
    tool("fetch_slice", kind="entity", id=SHARED, window=64, access_level="private", include_private=True),
    tool("trace_entity", entity=PRIV["entname"], access_level="private", include_private=True),
    tool("trace_entity", entity=PRIV["alias"], access_level="private", include_private=True),
    tool("list_memory_versions", agent_id=ATLAS),
    tool("explain_memory_change", agent_id=ATLAS, digest="{ATLAS_D2}"),
    tool("rollback_agent_memory", agent_id=ATLAS, version_id="{ATLAS_V1}", dry_run=True),
    tool("export_agents"),
    resource(f"agent-library://agents/{ATLAS}/memory"),
    resource(f"agent-library://entities/{PRIV['entname']}"),
]


@dataclass
class Answer:
    spec: Spec
    outcome: Any
    text: str  # every text of the answer, to search
    data: Any = None  # the structured answer (tools) or the parsed JSON (resources)

    @property
    def asked(self) -> str:
        return json.dumps(self.spec, ensure_ascii=False)


async def ask(client: Client, spec: Spec) -> Answer:
    """Make one call; its outcome (A/L/S or an error status) and every text of its answer."""
    kind, name, args = spec
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            if kind == "tool":
                result = await client.call_tool(name, args)
                body = result.structured_content
                text = json.dumps(body, ensure_ascii=False) + "".join(
                    getattr(part, "text", "") for part in result.content
                )
                if result.is_error:
                    status = (body or {}).get("error", {}).get("status", "error without status")
                    return Answer(spec, status, text, body)
                if name in ("commit_to_federation", "forget"):
                    return Answer(spec, S if (body or {}).get("staged") else L, text, body)
                return Answer(spec, A, text, body)
            read = await client.read_resource(name)
            text = "".join(getattr(part, "text", "") for part in read.contents)
            data = json.loads(text)
            if isinstance(data, dict) and "error" in data:
                return Answer(spec, data["error"].get("status"), text, data)
            return Answer(spec, A, text, data)
    except Exception as exc:  # recorded as a mismatch, never hidden
        return Answer(spec, f"exception {type(exc).__name__}: {exc}", str(exc))


def jsonrpc(spec: Spec) -> bytes:
    kind, name, args = spec
    if kind == "tool":
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": name, "arguments": args}}
    else:
        message = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": name}}
    return json.dumps(message).encode("utf-8")


def post(server: Served, body: bytes, token: str | None) -> tuple[int, bytes]:
    """One raw POST to /mcp (for callers the door must stop); returns status and body."""
    headers = {
        "Host": f"127.0.0.1:{server.port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=CALL_TIMEOUT)
    try:
        conn.request("POST", "/mcp", body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def for_caller(spec: Spec, caller: str, ctx: dict[str, str]) -> Spec:
    return fill(spec, {**ctx, "CALLER": caller})  # type: ignore[no-any-return]


# -- the matrix ----------------------------------------------------------------------------


async def test_authorization_matrix(served: Served) -> None:
    got: dict[tuple[str, str], Any] = {}
    members = {"trusted": TRUSTED, "q_grant": DESK, "q_nogrant": NOGRANT}
    audit = AuditLog(served.home)
    already = len(list(audit.records()))

    async with operator_client(served) as client:
        for label, spec, _ in MATRIX:
            got[label, "operator"] = (await ask(client, for_caller(spec, "operator", served.ctx))).outcome
    for column, member in members.items():
        async with http_client(served.url, served.tokens[member]) as client:
            for label, spec, _ in MATRIX:
                answer = await ask(client, for_caller(spec, member, served.ctx))
                got[label, column] = answer.outcome

    # The revoked member works until it is revoked; revocation holds from the next request.
    hello = jsonrpc(tool("describe_caller"))
    status, body = post(served, hello, served.tokens[GONE])
    assert status == 200 and b'"member_id":"gone"' in body.replace(b" ", b""), body
    MemberRegistry(served.home).revoke(GONE)
    for label, spec, _ in MATRIX:
        got[label, "revoked"] = post(served, jsonrpc(for_caller(spec, GONE, served.ctx)), served.tokens[GONE])[0]
        got[label, "no_token"] = post(served, jsonrpc(for_caller(spec, "none", served.ctx)), None)[0]

    mismatches = [
        f"{label} as {caller}: expected {want}, got {got[label, caller]}"
        for label, _, row in MATRIX
        for caller, want in zip(CALLERS, row, strict=True)
        if got[label, caller] != want
    ]

    # The audit log holds exactly one record per call, in order, saying allow or deny.
    records = list(audit.records())[already:]
    for column, who in (("operator", "operator"), *members.items()):
        mine = [r for r in records if r.caller == who]
        # "deny" is the policy refusing (401/403); an allowed call that fails (404) is "allow".
        want = [(200, "allow") if row[CALLERS.index(column)] in (A, L, S)
                else (row[CALLERS.index(column)],
                      "deny" if row[CALLERS.index(column)] in (401, 403) else "allow")
                for _, _, row in MATRIX]
        if [(r.status, r.decision) for r in mine] != want:
            mismatches.append(f"audit records of {who}: expected {want}, got "
                              f"{[(r.op, r.status, r.decision) for r in mine]}")
    door = [r for r in records if r.caller == "anonymous"]
    if len(door) != 2 * len(MATRIX) or any((r.status, r.decision) != (401, "deny") for r in door):
        mismatches.append(f"door records: expected {2 * len(MATRIX)} x (401, deny), got "
                          f"{[(r.status, r.decision) for r in door]}")
    cells = len(MATRIX) * len(CALLERS)
    print(f"\nauthorization matrix: {len(MATRIX)} calls x {len(CALLERS)} callers = {cells} cells, "
          f"{len(mismatches)} mismatches")
    assert len(got) == cells
    assert mismatches == [], "\n".join(mismatches)


# -- canaries ------------------------------------------------------------------------------


def leaks(answers: list[Answer], secrets_: set[str]) -> list[str]:
    """Secrets an answer holds that its own request did not (an echo of the request is fine)."""
    found: dict[str, None] = {}  # ordered, without repeats
    for answer in answers:
        for secret in sorted(secrets_):
            if secret in answer.text and secret not in answer.asked:
                found[f"{secret} in the answer to {answer.asked}: {answer.text[:400]}"] = None
    return list(found)


async def all_answers(client: Client, caller: str, ctx: dict[str, str], specs: list[Spec]) -> list[Answer]:
    return [await ask(client, for_caller(spec, caller, ctx)) for spec in specs]


async def test_no_canary_of_a_non_granted_namespace_reaches_a_quarantined_member(served: Served) -> None:
    specs = [spec for _, spec, _ in MATRIX] + CANARY_PROBES
    found: list[str] = []
    for member in (DESK, NOGRANT):
        async with http_client(served.url, served.tokens[member]) as client:
            answers = await all_answers(client, member, served.ctx, specs)
        assert all(not str(a.outcome).startswith("exception") for a in answers), [
            (a.asked, a.outcome) for a in answers if str(a.outcome).startswith("exception")]
        if member == DESK:  # the 404 that lists known agents was really produced, and cut
            missing = next(a for a in answers if a.spec == tool("list_recent_work", agent=GHOST))
            assert missing.outcome == N and f"known agents: {ATLAS}, {DESK}" in missing.text
        found += [f"[{member}] {leak}" for leak in leaks(answers, CANARIES)]

    # The canaries are reachable: a trusted member (or the operator) does see every one of them,
    # so their absence above is the filter at work, not an empty library.
    seen_by_trusted: list[Answer] = []
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        seen_by_trusted += await all_answers(client, TRUSTED, served.ctx, specs)
        seen_by_trusted.append(await ask(client, resource(f"agent-library://agents/{VAULT}/memory")))
    async with operator_client(served) as client:
        seen_by_trusted.append(await ask(client, resource(f"agent-library://agents/{VAULT}/memory")))
        seen_by_trusted.append(await ask(client, tool("list_agents")))
    everything = "\n".join(a.text for a in seen_by_trusted)
    unseen = sorted(c for c in CANARIES - {CAN["privtag"]} if c not in everything)
    assert unseen == [], f"canaries no trusted caller can read (the probe is vacuous): {unseen}"

    print(f"\ncanary check: {len(specs)} calls x 2 quarantined members, {len(CANARIES)} canaries, "
          f"{len(found)} leaks")
    assert found == [], "\n".join(found)


async def test_callers_over_http_never_see_private_rows(served: Served) -> None:
    specs = [spec for _, spec, _ in MATRIX] + CANARY_PROBES + PRIVATE_PROBES
    found: list[str] = []
    for member in (TRUSTED, DESK, NOGRANT):
        async with http_client(served.url, served.tokens[member]) as client:
            answers = await all_answers(client, member, served.ctx, specs)
        found += [f"[{member}] {leak}" for leak in leaks(answers, set(PRIV.values()))]
    # Non-vacuous: the local operator, asking for private rows explicitly, sees them.
    async with operator_client(served) as client:
        local = await all_answers(client, "operator", served.ctx, PRIVATE_PROBES[:3])
    assert PRIV["entsummary"] in "".join(a.text for a in local)
    assert found == [], "\n".join(found)


async def test_find_entity_does_not_reveal_a_hidden_exact_match(served: Served) -> None:
    """An exact name in a non-granted namespace must not change what a quarantined member gets.

    ``harbor-gateway`` (team, in the granted ATLAS) is a near miss of ``harbor-gatewax``. When
    nobody holds ``harbor-gatewax`` exactly, a search for it offers ``harbor-gateway``; the answer
    must be the same when a non-granted namespace holds ``harbor-gatewax`` exactly, or the member
    learns that the hidden name exists.
    """
    probe = tool("find_entity", name="harbor-gatewax", access_level="team")
    async with http_client(served.url, served.tokens[DESK]) as client:
        before = await ask(client, probe)
    hidden = f"hidden-{HEX}"  # a new namespace nobody was granted
    with Library.open(served.root) as library:
        library.commit(
            hidden,
            {"agent": {"type": "other"},
             "known_entities": [{"name": "harbor-gatewax", "summary": "hidden", "visibility": "team"}]},
            provenance=Provenance(caller="fixture"),
        )
    async with http_client(served.url, served.tokens[DESK]) as client:
        after = await ask(client, probe)
    names_before = [m["name"] for m in before.data["matches"]] if before.outcome == A else before.outcome
    names_after = [m["name"] for m in after.data["matches"]] if after.outcome == A else after.outcome
    assert names_before == ["harbor-gateway"]
    assert names_after == names_before, (
        "a quarantined member can tell that a non-granted namespace holds an exact name: "
        f"find_entity('harbor-gatewax') answered {names_before} before and {names_after} after "
        f"{hidden} (not granted) gained that entity"
    )


async def test_memory_status_shows_a_quarantined_member_its_namespaces_and_counts(
    served: Served,
) -> None:
    async with http_client(served.url, served.tokens[DESK]) as client:
        mine = await ask(client, tool("memory_status"))
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        everything = await ask(client, tool("memory_status"))
    assert mine.outcome == A and everything.outcome == A
    assert mine.data["scope"] == "filtered" and "library" not in mine.data
    assert set(mine.data["agents"]["agents"]) == {ATLAS, DESK}
    assert VAULT in everything.data["agents"]["agents"] and everything.data["scope"] == "full"
    # Neither member sees private rows, not even counted; the broken file is the operator's.
    for data in (mine.data, everything.data):
        assert set(data["agents"]["totals"]["by_visibility"]) == {"public", "team"}
    assert any(BROKEN in text for text in everything.data["index"]["skipped"])
    assert mine.data["index"]["skipped"] == [] and "agents" not in mine.data["index"]
    assert "leftovers" not in mine.data and "peers" not in mine.data["peers"]


# -- writes, staging, rotation, audit --------------------------------------------------------


async def test_a_quarantined_commit_waits_in_staging_until_promoted(served: Served) -> None:
    row = f"staged-row-{HEX}"
    with Library.open(served.root) as library:
        live_before = library.current_digest(DESK)
    async with http_client(served.url, served.tokens[DESK]) as client:
        answer = await ask(client, tool(
            "commit_to_federation", agent_id=DESK,
            entities=[{"name": row, "summary": "waits for review", "visibility": "team"}]))
        assert answer.outcome == S, answer.text
        assert answer.data["staged"] is True and "bourdon staging promote" in answer.data["review"]
        # The reference's staged answer: its note, and a path inside the library.
        assert f"bourdon staging promote {DESK} --from {DESK}" in answer.data["note"]
        assert answer.data["path"] == f"staging/{DESK}/{DESK}.l5.yaml"
        # Not served: the live manifest is unchanged, and no read shows the staged row.
        for spec in (tool("find_entity", name=row, access_level="team"),
                     tool("query_agent_memory", agent=DESK, topic=row, access_level="team")):
            seen = await ask(client, spec)
            assert seen.outcome == A and seen.data["matches"] == [], seen.text
        memory = await ask(client, resource(f"agent-library://agents/{DESK}/memory"))
        assert row not in memory.text
    with Library.open(served.root) as library:
        assert library.current_digest(DESK) == live_before
        staged = {(s.caller, s.agent_id) for s in library.staged()}
        assert (DESK, DESK) in staged
        assert row in json.dumps(library.read_staged(DESK, DESK).data)
    listing = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(served.root), "staging", "list", "--json"],
        capture_output=True, text=True, timeout=60, env=child_env(served.home.parent), check=False,
    )
    assert listing.returncode == 0, listing.stderr
    assert {"caller": DESK, "agent_id": DESK}.items() <= next(
        s for s in json.loads(listing.stdout)["staged"] if s["agent_id"] == DESK).items()

    with Library.open(served.root) as library:
        library.promote(DESK, DESK)
        assert library.current_digest(DESK) != live_before
        assert (DESK, DESK) not in {(s.caller, s.agent_id) for s in library.staged()}
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        seen = await ask(client, tool("find_entity", name=row, access_level="team"))
        assert seen.outcome == A and row in seen.text, seen.text
    async with http_client(served.url, served.tokens[DESK]) as client:
        seen = await ask(client, tool("query_agent_memory", agent=DESK, topic=row, access_level="team"))
        assert seen.outcome == A and row in seen.text, seen.text


async def test_a_trusted_commit_is_live_at_once(served: Served) -> None:
    row = f"live-row-{HEX}"
    with Library.open(served.root) as library:
        before = library.current_digest(ATLAS)
        staged_before = len(library.staged())
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        answer = await ask(client, tool(
            "commit_to_federation", agent_id=ATLAS,
            entities=[{"name": row, "summary": "live now", "visibility": "team"}]))
        assert answer.outcome == L, answer.text
        seen = await ask(client, tool("find_entity", name=row, access_level="team"))
        assert seen.outcome == A and row in seen.text, seen.text
    async with http_client(served.url, served.tokens[DESK]) as client:  # granted ATLAS
        seen = await ask(client, tool("query_agent_memory", agent=ATLAS, topic=row, access_level="team"))
        assert seen.outcome == A and row in seen.text, seen.text
    with Library.open(served.root) as library:
        assert library.current_digest(ATLAS) != before
        assert len(library.staged()) == staged_before


async def test_a_commit_over_http_counts_only_rows_the_caller_may_see(served: Served) -> None:
    """The reference's counts and path, without a private row or a server path in them."""
    new_row, extra_tag = f"counted-row-{HEX}", f"prvextra{HEX}"
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        answer = await ask(client, tool(
            "commit_to_federation", agent_id=ATLAS,
            # The second row is the private entity: the merge updates it (a new tag) unseen.
            entities=[{"name": new_row, "visibility": "team"},
                      {"name": PRIV["entname"], "tags": [extra_tag]}]))
    assert answer.outcome == L, answer.text
    with Library.open(served.root) as library:
        live = library.read(ATLAS).data
    assert extra_tag in json.dumps(live), "the private row was not updated"

    def shown(rows: list[dict[str, Any]]) -> int:  # ATLAS's policy: default team, one private tag
        return sum(1 for r in rows
                   if r.get("visibility") != "private" and PRIV["ptag"] not in r.get("tags", []))

    # Counted as if the private row were not there: the change names two rows, both new to the
    # caller, exactly as two new names would answer (no "updated" tells it a hidden row exists).
    data = answer.data
    assert (data["entities_added"], data["entities_updated"]) == (2, 0)
    assert (data["added"], data["updated"]) == (2, 0)
    assert data["total_entities"] == shown(live["known_entities"]) + 1 <= len(live["known_entities"])
    assert data["total_notes"] == shown(live["notes"]) < len(live["notes"])
    assert data["total"] == sum(data[f"total_{s}"] for s in ("entities", "sessions", "workstreams", "notes"))
    assert data["path"] == f"agents/{ATLAS}.l5.yaml"
    assert str(served.root) not in answer.text


async def test_a_plain_rollback_over_http_rolls_back_and_counts_only_what_it_may_see(
    served: Served,
) -> None:
    agent = f"undo-probe-{HEX}".lower()
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        first = await ask(client, tool("commit_to_federation", agent_id=agent, agent_type="other",
                                       entities=[{"name": "kept", "visibility": "public"}]))
        assert first.outcome == L, first.text
        with Library.open(served.root) as library:  # the operator adds a private row
            library.commit(agent, {"known_entities": [{"name": f"prv-{HEX}", "visibility": "private"}]})
        later = await ask(client, tool("commit_to_federation", agent_id=agent,
                                       entities=[{"name": "later", "visibility": "team"}]))
        assert later.outcome == L, later.text
        done = await ask(client, tool("rollback_agent_memory", agent_id=agent,
                                      version_id=first.data["version_id"]))
    assert done.outcome == A, done.text
    assert done.data["restored_version"] == first.data["version_id"]
    assert (done.data["replaced_digest"], done.data["digest"]) == (
        later.data["digest"], first.data["digest"])
    assert done.data["path"] == f"agents/{agent}.l5.yaml"
    # Two rows went away; the member is told of the one it could see.
    assert done.data["restored"] == {"added": 0, "updated": 0, "removed": 1}
    with Library.open(served.root) as library:
        assert [r["name"] for r in library.read(agent).data["known_entities"]] == ["kept"]


async def test_version_sizes_over_http_do_not_show_a_private_edit(served: Served) -> None:
    """The write that added only private rows leaves the size a member sees unchanged."""
    sizes: dict[str, dict[str, int]] = {}
    async with http_client(served.url, served.tokens[TRUSTED]) as client:
        answer = await ask(client, tool("list_memory_versions", agent_id=ATLAS, limit=100))
        assert answer.outcome == A, answer.text
        sizes["member"] = {v["version_id"]: v["size_bytes"] for v in answer.data["versions"]}
        by_digest8 = {v["digest8"]: v["version_id"] for v in answer.data["versions"]}
    async with operator_client(served) as client:
        answer = await ask(client, tool("list_memory_versions", agent_id=ATLAS, limit=100))
        sizes["operator"] = {v["version_id"]: v["size_bytes"] for v in answer.data["versions"]}
    before, private_edit = served.ctx["ATLAS_V1"], by_digest8[served.ctx["ATLAS_D2"]]
    assert sizes["operator"][private_edit] > sizes["operator"][before]  # not vacuous
    assert sizes["member"][private_edit] == sizes["member"][before]


async def test_rotation_retires_the_old_token_on_the_next_request(served: Served) -> None:
    hello = jsonrpc(tool("describe_caller"))
    old = served.tokens[ROTOR]
    status, body = post(served, hello, old)
    assert status == 200 and json.loads(body)["result"]["structuredContent"]["member_id"] == ROTOR
    new = MemberRegistry(served.home).rotate(ROTOR)
    served.tokens[f"{ROTOR}-rotated"] = new
    assert new != old
    status, body = post(served, hello, old)
    assert status == 401, body
    status, body = post(served, hello, new)
    assert status == 200, body
    me = json.loads(body)["result"]["structuredContent"]
    assert (me["member_id"], me["tier"], me["transport"]) == (ROTOR, "quarantined", "http")
    assert me["readable_namespaces"] == sorted({ATLAS, ROTOR})


async def test_the_audit_log_has_one_record_per_call_and_no_token(served: Served) -> None:
    audit = AuditLog(served.home)
    calls: list[tuple[Spec, str, str, int]] = [  # call, expected op, decision, status
        (tool("describe_caller"), "describe_caller", "allow", 200),
        (tool("query_agent_memory", agent=ATLAS, topic=SHARED), "query_agent_memory", "allow", 200),
        (tool("query_agent_memory", agent=VAULT, topic=SHARED), "query_agent_memory", "deny", 403),
        (tool("list_agents"), "list_agents", "allow", 200),
        (tool("rollback_agent_memory", agent_id=ATLAS, version_id="{ATLAS_V1}"), "rollback_agent_memory", "deny", 403),
        (tool("commit_to_federation", agent_id=AUDITOR, agent_type="other", notes=note("audited")),
         "commit_to_federation", "allow", 200),
        (tool("commit_to_federation", agent_id=ATLAS, notes=note("audited")), "commit_to_federation", "deny", 403),
        (resource("agent-library://agents"), "resource:agents", "allow", 200),
        (resource(f"agent-library://agents/{VAULT}/memory"), "resource:agent_memory", "deny", 403),
        (resource(f"agent-library://agents/{ATLAS}/memory"), "resource:agent_memory", "allow", 200),
    ]
    before = [r for r in audit.records() if r.caller == AUDITOR]
    assert before == []
    async with http_client(served.url, served.tokens[AUDITOR]) as client:
        for spec, *_ in calls:
            answer = await ask(client, fill(spec, served.ctx))
            assert not str(answer.outcome).startswith("exception"), answer.outcome
    mine = [r for r in audit.records() if r.caller == AUDITOR]
    assert [(r.op, r.decision, r.status) for r in mine] == [(op, d, s) for _, op, d, s in calls]
    assert all(r.tier == "quarantined" and r.transport == "http" for r in mine)
    namespaces = [r.namespace for r in mine]
    assert namespaces[2] == VAULT and namespaces[8] == VAULT

    # The door records each refused request once, as anonymous, without the token it was sent.
    anonymous = sum(1 for r in audit.records() if r.caller == "anonymous")
    MemberRegistry(served.home).revoke(GONE)  # revoked already by the matrix; idempotent
    refused = [served.tokens[GONE], None, "bdn_" + "0" * 48, "not-a-token"]
    for token in refused:
        post(served, jsonrpc(tool("describe_caller")), token)
    door = [r for r in audit.records() if r.caller == "anonymous"][anonymous:]
    assert len(door) == len(refused)
    assert all(r.decision == "deny" and r.status == 401 for r in door)

    assert all(r.decision in ("allow", "deny") for r in audit.records())
    for place in (audit.path, *served.logs):  # the audit log, the server's stdout and stderr
        text = place.read_text(encoding="utf-8", errors="replace")
        leaked = sorted(member for member, token in served.tokens.items()
                        if token in text or token[4:] in text)
        assert leaked == [], f"token text of {leaked} in {place}"
