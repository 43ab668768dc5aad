"""The HTTP front door, cell by cell, against ONE real ``bourdon serve --transport http``.

Every request is made with a raw socket (so a missing ``Host``, non-ASCII header bytes and
chunked bodies can be sent as they are) to 127.0.0.1 only, with a timeout. Each cell's expected
status comes from the tables below and the order of the door's checks (``httpgate``): a token in
the query string (400), then ``Host`` (421), then ``Origin`` (403), then the body size by
``Content-Length`` (413), then the bearer token (401); past the door the request is answered
(200, as the member the token belongs to).

Also: the decision to refuse a non-loopback ``--host`` when no member can authenticate (tested
without ever binding off loopback), and token hygiene over everything the module saw.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.serve.httpgate import MAX_BODY
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

TIMEOUT = 15.0  # seconds, for any one request
MEMBER, OTHER, REVOKED, PATHPROBE = "laptop", "other-box", "old-box", "path-probe"


def tiny_library(root: Path) -> None:
    with Library.init(root) as library:
        library.import_manifest(
            yamlio.dump({
                "spec_version": "0.1",
                "agent": {"id": "atlas", "type": "code-assistant"},
                "last_updated": "2026-11-30T00:00:00Z",
                "known_entities": [{"name": "atlas-core", "visibility": "public"}],
            }),
            what="atlas",
            provenance=Provenance(caller="fixture"),
        )


# -- a raw HTTP client ---------------------------------------------------------------------


@dataclass
class Reply:
    status: int | None  # None: the server closed the connection without a status line
    headers: dict[str, str]
    body: bytes


def parse_reply(raw: bytes) -> Reply:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines or not lines[0].startswith(b"HTTP/"):
        return Reply(None, {}, raw)
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    return Reply(status, headers, body)


@dataclass
class Served:
    root: Path
    user: Path  # HOME of the server; BOURDON_HOME is user/.bourdon
    port: int
    tokens: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    logs: list[Path] = field(default_factory=list)
    seen: list[bytes] = field(default_factory=list)  # every reply received, for token hygiene

    @property
    def home(self) -> Path:
        return self.user / ".bourdon"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def send(self, head: bytes, body: bytes | list[bytes] = b"") -> Reply:
        """Send one request (``body`` a list: chunked) on a fresh connection and read the reply."""
        raw = b""
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            try:
                sock.sendall(head)
                if isinstance(body, list):
                    for chunk in body:
                        sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                    sock.sendall(b"0\r\n\r\n")
                else:
                    sock.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered early and closed; its answer may still be readable
            try:
                while chunk := sock.recv(65536):
                    raw += chunk
            except (ConnectionResetError, TimeoutError):
                pass
        self.seen.append(raw)
        return parse_reply(raw)

    def request(
        self,
        *,
        target: str = "/mcp",
        host: str | None = "default",
        headers: list[tuple[bytes, bytes]] | None = None,
        body: bytes | list[bytes] | None = None,
        content_length: int | None = None,
        version: str = "1.1",
        token: str | None = "default",
    ) -> Reply:
        """A POST of ``describe_caller`` (or ``body``) with the headers an MCP client sends."""
        if body is None:
            body = DESCRIBE
        lines = [f"POST {target} HTTP/{version}".encode("latin-1")]
        if host is not None:
            lines.append(b"Host: " + (self.host if host == "default" else host).encode("latin-1"))
        lines += [b"Content-Type: application/json", b"Accept: application/json, text/event-stream",
                  b"Connection: close"]
        if token is not None:
            lines.append(b"Authorization: Bearer " + self.tokens[MEMBER if token == "default" else token].encode())
        lines += [name + b": " + value for name, value in headers or []]
        if isinstance(body, list):
            lines.append(b"Transfer-Encoding: chunked")
        else:
            lines.append(b"Content-Length: %d" % (len(body) if content_length is None else content_length))
        return self.send(b"\r\n".join(lines) + b"\r\n\r\n", body)


DESCRIBE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "describe_caller", "arguments": {}}}).encode()


def outcome(reply: Reply) -> str:
    """The status, and for a 200 the member the server saw (``200 laptop``)."""
    if reply.status != 200:
        return str(reply.status)
    try:
        me = json.loads(reply.body)["result"]["structuredContent"]
        return f"200 {me['member_id']}"
    except (ValueError, KeyError, TypeError):
        return f"200 (unreadable: {reply.body[:200]!r})"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("door")
    root, user = base / "lib", base / "user"
    tiny_library(root)
    registry = MemberRegistry(user / ".bourdon")
    tokens = {
        MEMBER: registry.add(MEMBER, "trusted"),
        OTHER: registry.add(OTHER, "quarantined", ["atlas"]),
        REVOKED: registry.add(REVOKED, "trusted"),
        PATHPROBE: registry.add(PATHPROBE, "trusted"),
    }
    registry.revoke(REVOKED)
    server = Served(root, user, free_port(), tokens)
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


# -- the matrix ----------------------------------------------------------------------------

# Each dimension: (label, what to send, the door's answer for it alone: None = passes).
# {port} is the server's port. Host None: no Host header (HTTP/1.0, where it is optional).
HOSTS: list[tuple[str, str | None, int | None]] = [
    ("127.0.0.1:port", "127.0.0.1:{port}", None),
    ("localhost:port", "localhost:{port}", None),
    ("evil.example", "evil.example", 421),
    ("evil.example:port", "evil.example:{port}", 421),
    ("missing", None, 421),
]
ORIGINS: list[tuple[str, str | None, int | None]] = [
    ("absent", None, None),
    ("http://localhost:port", "http://localhost:{port}", None),
    ("http://127.0.0.1:port", "http://127.0.0.1:{port}", None),
    ("https://127.0.0.1:port", "https://127.0.0.1:{port}", None),  # documented as allowed
    ("https://localhost:port", "https://localhost:{port}", None),
    ("http://evil.example", "http://evil.example", 403),
    ("null", "null", 403),
]
FAKE = "bdn_" + "0123456789abcdef" * 3  # well-formed, belongs to nobody

# Authorization: (label, header value (bytes) or a member's token, query string, answer alone,
# the member a 200 is answered as). A query-string token is refused before anything else.
AUTHS: list[tuple[str, Any, str, int | str]] = [
    ("valid token", ("token", MEMBER), "", f"200 {MEMBER}"),
    ("none", None, "", 401),
    ("wrong token", b"Bearer " + FAKE.encode(), "", 401),
    ("other member's token", ("token", OTHER), "", f"200 {OTHER}"),
    ("revoked member's token", ("token", REVOKED), "", 401),
    ("Bearer + non-ASCII bytes", b"Bearer bdn_\xc3\xa9\xff\xfe\x80" + b"a" * 40, "", 401),
    ("Bearer + non-ASCII bytes only", b"Bearer \xff\xfe\xfd\xfc", "", 401),
    ("Bearer, empty", b"Bearer ", "", 401),
    ("Bearer, oversized", b"Bearer bdn_" + b"a" * 400, "", 401),
    ("Basic", ("basic", MEMBER), "", 401),
    ("?token=", ("token", MEMBER), "token={token}", 400),
    ("?access_token=", ("token", MEMBER), "access_token={token}", 400),
    ("bdn_ token anywhere in the query", ("token", MEMBER), "q=hello&state=x{token}y", 400),
    ("bdn_ token in the query, no header", None, "next=/mcp&{token}", 400),
]
CHECK_ORDER = "query token (400) -> Host (421) -> Origin (403) -> bearer (401) -> answered (200)"


def expected(host: int | None, origin: int | None, auth: int | str, query: str) -> str:
    if query and auth == 400:
        return "400"
    for refusal in (host, origin):
        if refusal is not None:
            return str(refusal)
    return str(auth)


def auth_header(served: Served, value: Any) -> list[tuple[bytes, bytes]]:
    if value is None:
        return []
    if isinstance(value, bytes):
        return [(b"Authorization", value)]
    kind, member = value
    token = served.tokens[member]
    if kind == "basic":
        return [(b"Authorization", b"Basic " + base64.b64encode(f"{member}:{token}".encode()))]
    return [(b"Authorization", b"Bearer " + token.encode())]


def test_the_door_matrix(served: Served) -> None:
    port = served.port
    got: dict[tuple[str, str, str], tuple[str, str]] = {}
    for host_label, host, host_refusal in HOSTS:
        for origin_label, origin, origin_refusal in ORIGINS:
            for auth_label, value, query, auth_answer in AUTHS:
                headers = auth_header(served, value)
                if origin is not None:
                    headers.append((b"Origin", origin.format(port=port).encode()))
                target = "/mcp" + ("?" + query.format(token=served.tokens[MEMBER]) if query else "")
                reply = served.request(
                    target=target,
                    host=None if host is None else host.format(port=port),
                    version="1.0" if host is None else "1.1",
                    headers=headers,
                    token=None,
                )
                want = expected(host_refusal, origin_refusal, auth_answer, query)
                got[host_label, origin_label, auth_label] = (want, outcome(reply))
                if reply.status not in (200, None):  # the door's refusals are JSON saying why
                    error = json.loads(reply.body)["error"]
                    assert error["status"] == reply.status and error["message"]
    mismatches = [f"Host {h} / Origin {o} / {a}: expected {w}, got {g}"
                  for (h, o, a), (w, g) in got.items() if w != g]
    cells = len(HOSTS) * len(ORIGINS) * len(AUTHS)
    print(f"\ndoor matrix: {len(HOSTS)} hosts x {len(ORIGINS)} origins x {len(AUTHS)} authorizations "
          f"= {cells} cells, {len(mismatches)} mismatches (order: {CHECK_ORDER})")
    assert len(got) == cells
    assert mismatches == [], "\n".join(mismatches)
    assert not any(g.startswith("5") for _, g in got.values())


def test_body_size_limits(served: Served) -> None:
    pad = MAX_BODY - len(DESCRIBE)
    at_limit = DESCRIBE + b" " * pad  # still valid JSON, exactly MAX_BODY bytes
    over = at_limit + b" "
    assert len(at_limit) == MAX_BODY and len(over) == MAX_BODY + 1
    chunks = [b" " * 65536] * (2 * MAX_BODY // 65536) + [DESCRIBE]  # 2 MiB, no Content-Length
    cells = [
        ("Content-Length at the limit (1 MiB)", lambda: served.request(body=at_limit), f"200 {MEMBER}"),
        ("Content-Length limit + 1", lambda: served.request(body=over), "413"),
        ("Content-Length limit + 1, declared only", lambda: served.request(body=b"{}", content_length=MAX_BODY + 1), "413"),
        ("Content-Length limit + 1, no token", lambda: served.request(body=over, token=None), "413"),
        ("chunked, small", lambda: served.request(body=[DESCRIBE[:10], DESCRIBE[10:]]), f"200 {MEMBER}"),
        ("chunked, 2 MiB (the SDK's limit)", lambda: served.request(body=chunks), "413"),
        ("after the chunked 2 MiB: the server still answers", lambda: served.request(), f"200 {MEMBER}"),
    ]
    got = [(label, want, outcome(make())) for label, make, want in cells]
    mismatches = [f"{label}: expected {want}, got {g}" for label, want, g in got if want != g]
    print(f"\nbody sizes: {len(cells)} cells, {len(mismatches)} mismatches")
    assert mismatches == [], "\n".join(mismatches)
    assert served.proc is not None and served.proc.poll() is None


def test_a_request_without_host_under_http_1_1_never_reaches_the_app(served: Served) -> None:
    # HTTP/1.1 makes Host mandatory: the HTTP parser refuses it (400) before the door runs.
    reply = served.request(host=None, version="1.1")
    assert reply.status == 400


def test_a_token_in_the_url_path_is_never_recorded(served: Served) -> None:
    """Tokens belong in the Authorization header only; one put in the path must not be logged.

    The door refuses a token in the query string because URLs end up in logs; the same holds
    for the path, and the door's own audit record of a refused request names the path.
    """
    token = served.tokens[PATHPROBE]
    for target in (f"/mcp/{token}", f"/{token}"):
        reply = served.request(target=target, token=None)
        assert reply.status is not None and 400 <= reply.status < 500, reply
    audit = (served.home / "audit.jsonl").read_text(encoding="utf-8")
    assert token not in audit and token[4:] not in audit, (
        "a token sent in the URL path is written to the audit log: "
        + next(line for line in audit.splitlines() if token[4:] in line)
    )


def test_a_percent_encoded_token_in_the_query_is_refused_too(served: Served) -> None:
    """``%62dn_`` is ``bdn_``: the URL still carries the token, so it must be refused (400)."""
    tail = served.tokens[MEMBER][4:]
    answered = {}
    for query in (f"state=%62dn_{tail}", f"state=bdn%5F{tail}", f"%74oken={tail}"):
        answered[f"?{query}"] = outcome(served.request(target=f"/mcp?{query}"))
    assert answered == dict.fromkeys(answered, "400"), answered


# -- the bind decision ---------------------------------------------------------------------

# Runs the real ``bourdon`` command (``bourdon.cli.main``) with two safety nets, so no test can
# ever bind off loopback: uvicorn's ``Server.run`` only reports what it would bind, and any bind
# to a non-loopback address fails.
NO_BIND = r"""
import socket, sys
import uvicorn

_bind = socket.socket.bind
def _guarded(self, address):
    if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
        raise SystemExit(f"TEST-GUARD: refused to bind {address!r}")
    return _bind(self, address)
socket.socket.bind = _guarded

def _would_bind(self, *args, **kwargs):
    sys.stderr.write(f"TEST-STUB would bind {self.config.host}:{self.config.port}\n")
    sys.stderr.flush()
uvicorn.Server.run = _would_bind
import bourdon.serve.launch
bourdon.serve.launch.listen = lambda door: socket.socket()  # unbound: uvicorn is stubbed

from bourdon.cli.main import main
raise SystemExit(main(sys.argv[1:]))
"""
REFUSAL = "would expose the library beyond this machine"


# (members enrolled, --host, refused?)
BIND_CASES: list[tuple[str, str, bool]] = [
    ("none", "0.0.0.0", True),
    ("none", "192.0.2.10", True),
    ("none", "::", True),
    ("none", "10.1.2.3", True),
    ("revoked only", "0.0.0.0", True),
    ("one active", "0.0.0.0", False),  # allowed: decided, never bound
    ("one active", "192.0.2.10", False),
    ("none", "127.0.0.1", False),
    ("none", "localhost", False),
    ("none", "::1", False),
]


def enrol(user: Path, members: str) -> None:
    registry = MemberRegistry(user / ".bourdon")
    if members != "none":
        registry.add("laptop", "trusted")
    if members == "revoked only":
        registry.revoke("laptop")


def check_bind(case: str, refused: bool, host: str, code: int, err: str) -> list[str]:
    if "TEST-GUARD" in err:
        return [f"{case}: tried to bind off loopback: {err}"]
    if refused and not (
        code == 2
        and REFUSAL in err
        and f"--host {host}" in err
        and "bourdon member add" in err  # what to do about it
        and "127.0.0.1" in err
        and "TEST-STUB" not in err  # refused before the server is built
    ):
        return [f"{case}: expected the refusal (exit 2), got {code}: {err}"]
    if not refused and not (code == 0 and REFUSAL not in err and f"TEST-STUB would bind {host}:" in err):
        return [f"{case}: expected to be allowed, got {code}: {err}"]
    return []


def test_bourdon_serve_refuses_a_non_loopback_host_without_members(tmp_path: Path) -> None:
    """The command itself, in two processes started at once (each is a cold start)."""
    root = tmp_path / "lib"
    Library.init(root).close()
    runs = []
    try:
        for n, (members, host, refused) in enumerate([("none", "0.0.0.0", True), ("one active", "0.0.0.0", False)]):
            user = tmp_path / f"user{n}"
            enrol(user, members)
            proc = subprocess.Popen(
                [sys.executable, "-c", NO_BIND, "--library", str(root), "serve", "--transport", "http",
                 "--host", host, "--port", str(free_port()), "--no-watch"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                env=child_env(user),
            )
            runs.append((f"members={members} --host {host}", refused, host, proc))
        mismatches = []
        for case, refused, host, proc in runs:
            _, err = proc.communicate(timeout=90)
            mismatches += check_bind(case, refused, host, proc.returncode, err)
    finally:
        for *_, proc in runs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)
    assert mismatches == [], "\n".join(mismatches)


def test_the_bind_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case through ``bourdon.cli.main`` in-process, with the same two safety nets."""
    import logging

    import uvicorn

    from bourdon.cli.main import main
    from bourdon.serve import launch

    real_bind = socket.socket.bind

    def guarded(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"TEST-GUARD: refused to bind {address!r}")
        real_bind(self, address)

    def would_bind(self: uvicorn.Server, *args: Any, **kwargs: Any) -> None:
        sys.stderr.write(f"TEST-STUB would bind {self.config.host}:{self.config.port}\n")

    monkeypatch.setattr(socket.socket, "bind", guarded)
    monkeypatch.setattr(uvicorn.Server, "run", would_bind)
    monkeypatch.setattr(launch, "listen", lambda door: socket.socket())  # unbound: uvicorn is stubbed
    monkeypatch.setattr(logging, "basicConfig", lambda **kwargs: None)
    root = tmp_path / "lib"
    Library.init(root).close()
    mismatches = []
    for n, (members, host, refused) in enumerate(BIND_CASES):
        user = tmp_path / f"user{n}"
        enrol(user, members)
        monkeypatch.setenv("BOURDON_HOME", str(user / ".bourdon"))
        code = main(["--library", str(root), "serve", "--transport", "http", "--host", host,
                     "--port", "7", "--no-watch"])
        mismatches += check_bind(f"members={members} --host {host}", refused, host, code, capsys.readouterr().err)
    print(f"\nbind decision: {len(BIND_CASES)} cases, {len(mismatches)} mismatches")
    assert mismatches == [], "\n".join(mismatches)


# -- token hygiene (last: it stops the server to read everything it wrote) ------------------------


def test_no_token_text_anywhere(served: Served) -> None:
    served.request()  # at least one answered request, whichever tests ran before
    served.stop()
    secrets_ = {label: text for member, token in served.tokens.items()
                for label, text in ((f"{member} token", token), (f"{member} token's hex", token[4:]))}
    places: dict[str, bytes] = {path.name: path.read_bytes() for path in served.logs}
    places["audit.jsonl"] = (served.home / "audit.jsonl").read_bytes()
    places["federation.yaml"] = (served.home / "federation.yaml").read_bytes()
    for n, reply in enumerate(served.seen):
        places[f"reply {n}"] = reply
    found = [f"{label} in {place}" for place, data in places.items()
             for label, text in secrets_.items() if text.encode() in data]
    print(f"\ntoken hygiene: {len(served.seen)} replies, audit log, server stdout/stderr, "
          f"federation.yaml; {len(found)} findings")
    assert found == [], "\n".join(found)

    registry = yamlio.load(places["federation.yaml"], what="federation.yaml")
    rows = {row["id"]: row for row in registry["members"]}
    assert set(rows) == set(served.tokens)
    for member, token in served.tokens.items():
        row = rows[member]
        assert set(row) == {"id", "tier", "grants", "token_id", "token_sha256", "created", "rotated", "revoked", "peer"}
        assert row["token_id"] == token[:8] and len(row["token_id"]) == 8
        assert row["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
