"""Misbehaving peers for tests/test_peers.py, run as a subprocess on 127.0.0.1 only.

``python peers_fake.py raw``
    Four raw-socket HTTP servers on OS-chosen ports, printed as one JSON line on stdout:
    ``blackhole`` accepts and reads but never answers; ``slow`` answers a real-looking
    JSON-RPC result after 2 s; ``malformed`` answers HTTP 200 with invalid JSON; ``unauthorized``
    answers 401. Keep-alive is honoured. Exits when stdin closes (or on SIGTERM).

``python peers_fake.py hostile LOG [weird]``
    A real MCP server (the SDK's own streamable HTTP app, JSON responses, stateless) whose
    federated tools answer with rows marked private, unmarked, oddly marked and public, the
    non-public ones carrying canaries. Every call's arguments are appended to LOG as a JSON
    line. With ``weird``, every tool answers in shapes bourdon never sends (numbers where
    lists belong, a string where a list of agents belongs).
    Prints ``{"hostile": PORT}`` on stdout once listening.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from typing import Any

HOST = "127.0.0.1"
SLOW_SECONDS = 2.0
HOSTILE_CANARY = "CANARY-HOSTILE-7c1e"  # in rows a peer marks private (or marks oddly)
UNMARKED_CANARY = "CANARY-UNMARKED-9d4b"  # in rows a peer leaves unmarked (team)


# -- raw servers -------------------------------------------------------------------------


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One HTTP/1.1 request's body, or None when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or b"0")
    try:
        return await reader.readexactly(length) if length else b""
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def response(status: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    ).encode("latin-1") + body


def request_id(body: bytes) -> Any:
    try:
        return json.loads(body).get("id", 1)
    except (ValueError, AttributeError):
        return 1


async def blackhole(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while await reader.read(65536):
            pass  # read everything, answer nothing, until the client gives up
    except ConnectionError:
        pass
    finally:
        writer.close()


def responder(make: Any, delay: float = 0.0) -> Any:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (body := await read_request(reader)) is not None:
                if delay:
                    await asyncio.sleep(delay)
                writer.write(make(body))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    return handle


def slow_answer(body: bytes) -> bytes:
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "slow", "version": "1"},
        "structuredContent": {"agents": ["slow-agent"], "matches": []},
        "content": [],
    }
    payload = json.dumps({"jsonrpc": "2.0", "id": request_id(body), "result": result})
    return response("200 OK", payload.encode())


def malformed_answer(body: bytes) -> bytes:
    return response("200 OK", b'{"jsonrpc": "2.0", "id": ' + b'{"result": [,,,\xff\xfe')


def unauthorized_answer(body: bytes) -> bytes:
    return response(
        "401 Unauthorized",
        b'{"error": {"status": 401, "message": "no valid token"}}',
        'www-authenticate: Bearer error="invalid_token"\r\n',
    )


async def serve_raw() -> None:
    handlers = {
        "blackhole": blackhole,
        "slow": responder(slow_answer, SLOW_SECONDS),
        "malformed": responder(malformed_answer),
        "unauthorized": responder(unauthorized_answer),
    }
    servers = {name: await asyncio.start_server(h, HOST, 0) for name, h in handlers.items()}
    ports = {name: s.sockets[0].getsockname()[1] for name, s in servers.items()}
    print(json.dumps(ports), flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.create_future()

    def wait_stdin() -> None:
        sys.stdin.read()
        loop.call_soon_threadsafe(stdin_closed.set_result, None)

    threading.Thread(target=wait_stdin, daemon=True).start()
    await stdin_closed
    os._exit(0)  # no teardown chatter about the connections still held open


# -- the hostile MCP peer ----------------------------------------------------------------


def hostile_rows() -> dict[str, list[dict[str, Any]]]:
    """Rows a hostile peer sends; only ``public-from-hostile`` may ever be shown."""
    c, u = HOSTILE_CANARY, UNMARKED_CANARY
    entities: list[dict[str, Any]] = [
        {"name": f"secret-{c}", "agents": [f"agent-{c}"], "visibility": "private",
         "summaries": {"x": c}, "type": "topic", "match": "exact", "score": 100},
        {"name": "bourdon", "agents": [f"spy-{c}"], "visibility": "private",
         "summaries": {f"spy-{c}": c}, "type": "project", "match": "exact", "score": 100},
        {"name": f"upper-{c}", "agents": ["x"], "visibility": "PRIVATE", "type": "topic"},
        {"name": f"padded-{c}", "agents": ["x"], "visibility": " private ", "type": "topic"},
        {"name": f"bogus-{c}", "agents": ["x"], "visibility": "secret", "type": "topic"},
        {"name": f"null-{c}", "agents": ["x"], "visibility": None, "type": "topic"},
        {"name": f"number-{c}", "agents": ["x"], "visibility": 0, "type": "topic"},
        {"name": f"list-{c}", "agents": ["x"], "visibility": ["public"], "type": "topic"},
        {"name": f"unmarked-{u}", "agents": [f"agent-{u}"], "summaries": {"x": u},
         "type": "topic"},
        {"name": "public-from-hostile", "agents": ["evil-agent"], "visibility": "public",
         "summaries": {"evil-agent": "harmless"}, "type": "topic", "match": "exact",
         "score": 100},
    ]
    sessions: list[dict[str, Any]] = [
        {"agent": f"agent-{c}", "date": "2099-01-02", "cwd": f"/home/{c}", "session_id": c,
         "project_focus": ["bourdon"], "key_actions": [c], "visibility": "private"},
        {"agent": "x", "date": "2099-01-03", "cwd": "/x", "project_focus": ["bourdon"],
         "key_actions": [c], "visibility": "Private"},
        {"agent": f"agent-{u}", "date": "2099-01-01", "cwd": f"/home/{u}", "session_id": u,
         "project_focus": ["bourdon"], "key_actions": [u]},
        {"agent": "evil-agent", "date": "2099-01-04", "cwd": "/public", "session_id": "ok",
         "project_focus": ["bourdon"], "key_actions": ["harmless"], "visibility": "public"},
    ]
    return {"entities": entities, "sessions": sessions}


WEIRD: dict[str, dict[str, Any]] = {  # what a broken or hostile peer answers, in shapes bourdon never sends
    "find_entity": {"matches": [{"name": "weird-1", "visibility": "public", "agents": 5},
                                {"name": "weird-2", "visibility": "public", "agents": "evil"}]},
    "prepare_recognition_context": {
        "matched_entities": [{"name": "weird-3", "visibility": "public", "agents": 9}]},
    "list_recent_work": {"sessions": 7},
    "get_cross_agent_summary": {"entities": 3, "recent_sessions": "abc"},
    "list_agents": {"agents": 3},
}


def serve_hostile(log_path: str, weird: bool = False) -> None:
    import uvicorn
    from mcp.server import MCPServer

    rows = hostile_rows()
    server = MCPServer("hostile", log_level="WARNING")
    lock = threading.Lock()

    def log(tool: str, args: dict[str, Any]) -> None:
        with lock, open(log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": tool, **args}) + "\n")

    @server.tool()
    async def find_entity(
        name: str, access_level: str = "public", include_private: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        log("find_entity", {"access_level": access_level, "include_private": include_private,
                            "federation_hop": federation_hop})
        if weird:
            return WEIRD["find_entity"]
        return {"name": name, "matches": rows["entities"],
                "private_note": HOSTILE_CANARY, "meta": {"access_level": "private"}}

    @server.tool()
    async def prepare_recognition_context(
        prompt: str, access_level: str = "team", include_private: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        log("prepare_recognition_context", {"access_level": access_level,
                                            "include_private": include_private,
                                            "federation_hop": federation_hop})
        if weird:
            return WEIRD["prepare_recognition_context"]
        return {"prompt": prompt, "matched_entities": rows["entities"],
                "prompt_context": f"[bourdon:x] {HOSTILE_CANARY}",
                "recognition": HOSTILE_CANARY}

    @server.tool()
    async def list_recent_work(
        since: str | None = None, agent: str | None = None, access_level: str = "public",
        include_private: bool = False, limit: int | None = None, cursor: str | None = None,
        summary: bool = False, federation_hop: int = 0,
    ) -> dict[str, Any]:
        log("list_recent_work", {"access_level": access_level,
                                 "include_private": include_private,
                                 "federation_hop": federation_hop})
        if weird:
            return WEIRD["list_recent_work"]
        return {"sessions": rows["sessions"], "next_cursor": HOSTILE_CANARY}

    @server.tool()
    async def get_cross_agent_summary(
        project: str, access_level: str = "public", include_private: bool = False,
        federation_hop: int = 0, limit: int | None = None, cursor: str | None = None,
    ) -> dict[str, Any]:
        log("get_cross_agent_summary", {"access_level": access_level,
                                        "include_private": include_private,
                                        "federation_hop": federation_hop})
        if weird:
            return WEIRD["get_cross_agent_summary"]
        return {
            "project": project,
            "agents": [f"agent-{HOSTILE_CANARY}"],
            "entities": rows["entities"],
            "recent_sessions": rows["sessions"],
            "workstreams": [{"name": HOSTILE_CANARY, "visibility": "private"}],
            "notes": [{"text": HOSTILE_CANARY, "visibility": "private"}],
        }

    @server.tool()
    async def list_agents(federation_hop: int = 0) -> dict[str, Any]:
        log("list_agents", {"federation_hop": federation_hop})
        if weird:
            return WEIRD["list_agents"]
        return {"agents": ["evil-agent"], "meta": {"private": HOSTILE_CANARY}}

    app = server.streamable_http_app(json_response=True, stateless_http=True, host=HOST)
    sock = socket.socket()
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    print(json.dumps({"hostile": port}), flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:2] == ["raw"]:
        asyncio.run(serve_raw())
    elif sys.argv[1:2] == ["hostile"]:
        serve_hostile(sys.argv[2], weird=sys.argv[3:4] == ["weird"])
    else:
        sys.exit("usage: peers_fake.py raw | hostile LOG")
