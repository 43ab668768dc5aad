"""The reference Bourdon's command-line forms work here too (issue 11, item 1).

People run ``bourdon serve --library ~/agent-library`` from MCP client configs written for the
reference implementation, and put global options after the command (``bourdon agents --json``,
``bourdon commit AGENT --file F --library L``). What is checked:

1. every command and verb, found by walking the parser (so one added later is covered too),
   takes ``--library`` and ``--json`` before, between and after its words with one meaning,
   and lists them in its help; the commands that print no JSON refuse ``--json`` (exit 2);
2. real runs of those forms write to and read from the library named after the command;
3. ``bourdon serve`` with each of the reference's flags: ``--library``, ``--quiet``,
   ``--no-peers``, ``--peer URL`` (named after host and port, the reference's token variable),
   ``--peers-config``, ``--federate``, ``--allow-unauthenticated`` (public reads, no writes,
   loopback only), ``--allowed-host``, ``--allowed-origin``;
4. the MCP client config ``serve`` prints starts a server that answers.

Servers are real subprocesses on 127.0.0.1 with their own HOME and BOURDON_HOME.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters

from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import build_parser, main
from bourdon.errors import InputError
from bourdon.federation.peers import PeerList, parse_peer
from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.testing import make_library
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port
from tests.support.parsers import every_parser

pytestmark = pytest.mark.anyio

SAMPLE_AGENTS = ["claude-code", "claude-desktop-chat", "codex", "cursor", "gemini-cli"]
# The commands that print no JSON: a new command must either print JSON or be added here.
NO_JSON = {
    ("serve",), ("ui",), ("demo",), ("hook", "export"), ("hook", "user-prompt"),
    ("completion",),
}  # fmt: skip
ROWS = b"""\
agent:
  type: code-assistant
known_entities:
  - name: ledgerline
    type: project
    summary: Double-entry bookkeeping service in Go.
"""


# -- 1. every command: the global options anywhere ------------------------------------------


def is_leaf(parser: argparse.ArgumentParser) -> bool:
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


ALL = list(every_parser(build_parser()))
LEAVES = [(path, parser) for path, parser in ALL if path and is_leaf(parser)]


def words(path: tuple[str, ...]) -> str:
    return " ".join(path)


def filler(parser: argparse.ArgumentParser) -> list[str]:
    """Values for a command's required arguments, so that it parses."""
    out: list[str] = []
    for action in parser._actions:
        required = action.required if action.option_strings else action.nargs not in ("?", "*")
        if not required or isinstance(action, argparse._HelpAction):
            continue
        if action.choices:
            value = str(next(iter(action.choices)))
        elif action.type in (int, float):
            value = "1"
        else:
            value = "x"
        out += [action.option_strings[0], value] if action.option_strings else [value]
    return out


def parse(argv: list[str]) -> dict[str, Any]:
    return vars(build_parser().parse_args(argv))


def test_the_walk_finds_the_nested_verbs() -> None:
    found = {path for path, _ in LEAVES}
    assert {("commit",), ("serve",), ("member", "add"), ("staging", "promote"),
            ("remote", "add"), ("hook", "export"), ("hooks", "install")} <= found  # fmt: skip


def test_the_commands_without_json_are_exactly_the_known_ones() -> None:
    without = {path for path, _ in LEAVES if not parse([*path, *filler(_)]).get("prints_json")}
    assert without == NO_JSON


@pytest.mark.parametrize(("path", "parser"), LEAVES, ids=[words(p) for p, _ in LEAVES])
def test_global_options_mean_the_same_before_between_and_after_the_words(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    fill = filler(parser)
    flags = ["--library", "/libraries/a"] + ([] if path in NO_JSON else ["--json"])
    before = parse([*flags, *path, *fill])
    assert before["library"] == "/libraries/a"
    assert before["json"] is (path not in NO_JSON)
    forms = [[*path, *fill, *flags]]
    if len(path) > 1:
        forms.append([path[0], *flags, *path[1:], *fill])
    for form in forms:
        assert parse(form) == before, form
    plain = parse([*path, *fill])
    assert (plain["library"], plain["json"]) == (None, False)
    last = parse(["--library", "/libraries/a", *path, *fill, "--library", "/libraries/b"])
    assert last["library"] == "/libraries/b"  # given twice, the last one wins


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=[words(p) or "bourdon" for p, _ in ALL])
def test_every_help_lists_the_global_options(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "--library PATH" in out and "--json" in out
    if path:
        assert "global options (also accepted before the command):" in out
    if path in NO_JSON:
        assert f"refused: 'bourdon {words(path)}' prints no JSON" in out


@pytest.mark.parametrize("path", sorted(NO_JSON), ids=words)
@pytest.mark.parametrize("where", ["before", "after"])
def test_commands_that_print_no_json_refuse_it(
    path: tuple[str, ...], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fill = filler(dict(LEAVES)[path])
    argv = ["--json", *path, *fill] if where == "before" else [*path, *fill, "--json"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"bourdon: 'bourdon {words(path)}' prints no JSON; drop --json\n"


# -- 2. real runs with the options after the command ----------------------------------------


def bourdon(
    *args: str | Path, env: dict[str, str] | None = None, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """The real command; BOURDON_LIBRARY (from conftest) names a folder that is no library, so
    only a --library that was honoured can make a command find one."""
    return subprocess.run(
        [sys.executable, "-m", "bourdon", *map(str, args)],
        input=input, capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip


def test_commit_with_the_library_after_the_command(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    Library.init(root).close()
    rows = tmp_path / "rows.yaml"
    rows.write_bytes(ROWS)
    done = bourdon("commit", "ada", "--file", rows, "--library", root)
    assert done.returncode == 0, done.stderr
    with Library.open(root) as library:
        assert [v.op for v in library.history("ada")] == ["merge"]
    assert "ledgerline" in (root / "agents" / "ada.l5.yaml").read_text(encoding="utf-8")


def test_agents_json_reads_the_same_wherever_the_options_are(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    make_library(root).close()
    outs = [
        bourdon("agents", "--json", "--library", root),
        bourdon("agents", "--library", root, "--json"),
        bourdon("--json", "agents", "--library", root),
        bourdon("--library", root, "--json", "agents"),
    ]
    assert [o.returncode for o in outs] == [0, 0, 0, 0], [o.stderr for o in outs]
    assert [a["id"] for a in json.loads(outs[0].stdout)["agents"]] == SAMPLE_AGENTS
    assert {o.stdout for o in outs} == {outs[0].stdout}


def test_export_with_the_library_after_the_reader(tmp_path: Path) -> None:
    from tests.support.stores.claude_code import write_store

    store = write_store(tmp_path / "home")
    root = tmp_path / "lib"
    Library.init(root).close()
    done = bourdon("export", "claude-code", "--store", store, "--library", root, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["agent_id"] == "claude-code"
    assert (root / "agents" / "claude-code.l5.yaml").is_file()


# -- 3 and 4. bourdon serve with the reference's flags --------------------------------------


def venv_env(home: Path, **extra: str) -> dict[str, str]:
    """A child's environment with this interpreter's ``bin`` on PATH, so ``bourdon`` (the
    command a printed client config names) is the one under test."""
    env = child_env(home)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def client_config(stderr: str) -> dict[str, Any]:
    marker = "MCP client config: "
    line = next(line for line in stderr.splitlines() if marker in line)
    config: dict[str, Any] = json.loads(line.split(marker, 1)[1])
    return config


@contextlib.asynccontextmanager
async def stdio(env: dict[str, str], *args: str | Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bourdon", *map(str, args)], env=env
    )
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} should have been refused: {result.structured_content}"
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


@pytest.fixture
def sample_root(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    make_library(root).close()
    return root


async def test_the_printed_client_config_starts_a_server_that_answers(
    sample_root: Path, tmp_path: Path
) -> None:
    env = venv_env(tmp_path)
    done = bourdon("serve", "--library", sample_root, env=env)  # the reference's form
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    config = client_config(done.stderr)
    # Started as `python -m bourdon`: the same interpreter, by its absolute path.
    assert config == {
        "command": sys.executable,
        "args": ["-m", "bourdon", "serve", "--library", str(sample_root)],
    }
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env)
    async with Client(params) as client:
        answer = await call(client, "find_entity", name="bourdon", access_level="team")
    assert answer["matches"][0]["name"] == "bourdon"
    assert "claude-code" in answer["matches"][0]["agents"]


def test_quiet_prints_no_serving_line_but_still_prints_errors(
    sample_root: Path, tmp_path: Path
) -> None:
    env = venv_env(tmp_path)
    loud = bourdon("serve", "--library", sample_root, env=env)
    quiet = bourdon("serve", "--library", sample_root, "--quiet", env=env)
    assert "bourdon: serving " in loud.stderr
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    broken = bourdon("serve", "--quiet", "--library", tmp_path / "nothing", env=env)
    assert broken.returncode == 7
    assert "bourdon init" in broken.stderr


def write_peers(path: Path, **urls: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(yamlio.dump({"peers": [{"name": n, "url": u} for n, u in urls.items()]}))
    return path


def closed_port_url() -> str:
    """A peer URL on 127.0.0.1 where nothing listens: asking it fails at once."""
    return f"http://127.0.0.1:{free_port()}/mcp"


async def test_no_peers_turns_off_the_peers_of_peers_yaml(
    sample_root: Path, tmp_path: Path
) -> None:
    write_peers(tmp_path / ".bourdon" / "peers.yaml", dead=closed_port_url())
    env = venv_env(tmp_path)
    async with stdio(env, "serve", "--library", sample_root) as client:
        asked = await call(client, "find_entity", name="bourdon")
    async with stdio(env, "serve", "--library", sample_root, "--no-peers") as client:
        alone = await call(client, "find_entity", name="bourdon")
    assert (asked["peers_queried"], set(asked["peer_errors"])) == (1, {"dead"})
    assert "peers_queried" not in alone and "peer_errors" not in alone
    assert alone["matches"][0]["name"] == "bourdon"


@pytest.mark.parametrize(
    "other", [["--peer", "http://127.0.0.1:9/mcp"], ["--federate"], ["--peers-config", "p.yaml"]]
)
def test_no_peers_with_another_peer_option_is_refused(
    sample_root: Path, tmp_path: Path, other: list[str]
) -> None:
    done = bourdon("serve", "--library", sample_root, "--no-peers", *other, env=venv_env(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        "bourdon: --no-peers cannot be combined with --peer, --peers-config or --federate\n"
    )


async def test_peers_config_replaces_peers_yaml(sample_root: Path, tmp_path: Path) -> None:
    write_peers(tmp_path / ".bourdon" / "peers.yaml", dead=closed_port_url())
    chosen = write_peers(tmp_path / "elsewhere.yaml", elsewhere=closed_port_url())
    env = venv_env(tmp_path)
    async with stdio(env, "serve", "--library", sample_root, "--peers-config", chosen) as c:
        answer = await call(c, "find_entity", name="bourdon")
    assert (answer["peers_queried"], set(answer["peer_errors"])) == (1, {"elsewhere"})
    async with stdio(env, "serve", "--library", sample_root, "--federate") as c:
        federated = await call(c, "find_entity", name="bourdon")
    assert set(federated["peer_errors"]) == {"dead"}  # --federate: peers.yaml, as without it
    missing = bourdon("serve", "--library", sample_root, "--peers-config", tmp_path / "no.yaml",
                      env=env)  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr == f"bourdon: --peers-config {tmp_path / 'no.yaml'}: no such file\n"


def test_a_peers_file_row_without_a_name_is_named_after_its_host_and_port(tmp_path: Path) -> None:
    # The reference's --peers-config rows may leave out the name (it then uses the URL).
    chosen = tmp_path / "reference-peers.yaml"
    chosen.write_text(
        "peers:\n"
        "  - url: http://127.0.0.1:7501/mcp\n"
        "    token_env: BOURDON_PEER_DESK\n"
        "  - name: laptop\n"
        "    url: http://127.0.0.1:7502/mcp\n"
        "  - url: http://:bad/mcp\n"
    )
    peers = PeerList(tmp_path, chosen).peers()
    assert [(p.name, p.url, p.token_env) for p in peers] == [
        ("127-0-0-1-7501", "http://127.0.0.1:7501/mcp", "BOURDON_PEER_DESK"),
        ("laptop", "http://127.0.0.1:7502/mcp", None),
    ]


@pytest.mark.parametrize(
    ("text", "name", "url"),
    [
        ("http://127.0.0.1:7501", "127-0-0-1-7501", "http://127.0.0.1:7501/mcp"),
        ("http://127.0.0.1:7501/mcp", "127-0-0-1-7501", "http://127.0.0.1:7501/mcp"),
        ("https://Peer.Example.org", "peer-example-org", "https://Peer.Example.org/mcp"),
        (
            "http://desktop.tailnet:7500/mcp",
            "desktop-tailnet-7500",
            "http://desktop.tailnet:7500/mcp",
        ),
        ("http://[::1]:7502", "1-7502", "http://[::1]:7502/mcp"),
        ("desk=http://desktop.tailnet:7500", "desk", "http://desktop.tailnet:7500/mcp"),
    ],
)
def test_a_bare_peer_url_is_named_after_its_host_and_port(text: str, name: str, url: str) -> None:
    peer = parse_peer(text)
    assert (peer.name, peer.url, peer.token_env) == (name, url, None)


@pytest.mark.parametrize(
    "text", ["desktop", "ftp://x:1", "http://x:1/mcp?token=1", "http://:7500", "Desk=http://x"]
)
def test_peer_values_that_name_no_peer_are_refused(text: str) -> None:
    with pytest.raises(InputError):
        parse_peer(text)


@dataclass
class Peer:
    url: str
    token: str
    agents: list[str]


@pytest.fixture
def real_peer(tmp_path: Path) -> Iterator[Peer]:
    """Another machine's server: ``bourdon serve --transport http`` with one agent, 'b-code',
    and a trusted member token for this machine."""
    home = tmp_path / "peer-home"
    root = tmp_path / "peer-lib"
    with Library.init(root) as library:
        library.commit(
            "b-code",
            {"agent": {"type": "code-assistant"},
             "known_entities": [{"name": "bourdon", "type": "project", "visibility": "team",
                                 "summary": "known on the peer"}]},
        )  # fmt: skip
    token = MemberRegistry(home / ".bourdon").add("a-machine", "trusted")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bourdon", "serve", "--transport", "http", "--port", str(port),
         "--library", str(root), "--no-watch", "--quiet"],
        env=child_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for_port(proc, port)
        yield Peer(f"http://127.0.0.1:{port}", token, ["b-code"])
    finally:
        stop_process(proc)


async def test_a_bare_peer_url_is_asked_with_the_reference_token_variable(
    sample_root: Path, tmp_path: Path, real_peer: Peer
) -> None:
    port = real_peer.url.rsplit(":", 1)[1]
    bare = f"127-0-0-1-{port}"
    # The same server under a second URL (a loopback server answers to localhost too).
    other_url = real_peer.url.replace("127.0.0.1", "localhost") + "/mcp"
    flags = ["--peer", real_peer.url, "--peer", f"named={other_url}"]
    shared = venv_env(tmp_path, BOURDON_PEER_TOKEN=real_peer.token)
    async with stdio(shared, "serve", "--library", sample_root, *flags) as client:
        both = await call(client, "find_entity", name="bourdon", access_level="team")
    agents = both["matches"][0]["agents"]
    assert {f"peer:{bare}:b-code", "peer:named:b-code"} <= set(agents)
    assert both["peers_responded"] == 2
    # BOURDON_PEER_TOKEN_<NAME> comes first; the shared variable is only the fallback.
    own = venv_env(
        tmp_path,
        BOURDON_PEER_TOKEN="bdn_" + "0" * 48,
        **{f"BOURDON_PEER_TOKEN_127_0_0_1_{port}": real_peer.token},
    )
    async with stdio(own, "serve", "--library", sample_root, *flags) as client:
        one = await call(client, "find_entity", name="bourdon", access_level="team")
    assert f"peer:{bare}:b-code" in one["matches"][0]["agents"]
    assert "peer:named:b-code" not in one["matches"][0]["agents"]
    assert (one["peers_responded"], set(one["peer_errors"])) == (1, {"named"})


# -- the HTTP door: --allow-unauthenticated, --allowed-host, --allowed-origin ---------------


@dataclass
class Door:
    url: str
    root: Path
    home: Path


SECRET_ROWS = {
    "agent": {"type": "other"},
    "known_entities": [
        {"name": "harbor", "type": "project", "visibility": "public", "summary": "open"},
        {"name": "lantern", "type": "project", "visibility": "team", "summary": "team only"},
        {"name": "vault", "type": "project", "visibility": "private", "summary": "mine"},
    ],
}


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    """``serve --transport http --allow-unauthenticated`` on 127.0.0.1, with declared hosts
    (one by flag, one by environment) and a declared origin."""
    base = tmp_path_factory.mktemp("door")
    root = base / "lib"
    with Library.init(root) as library:
        library.commit("notes-bot", SECRET_ROWS)
    port = free_port()
    env = child_env(base)
    env["BOURDON_ALLOWED_HOSTS"] = "proxy.example.test, *.tailnet.test"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bourdon", "serve", "--library", str(root), "--transport", "http",
         "--port", str(port), "--no-watch", "--allow-unauthenticated",
         "--allowed-host", "bourdon.example.test", "--allowed-origin", "https://app.example.test"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for_port(proc, port)
        yield Door(f"http://127.0.0.1:{port}/mcp", root, base / ".bourdon")
    finally:
        stop_process(proc)


@contextlib.asynccontextmanager
async def tokenless(url: str) -> AsyncIterator[Client]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client({}) as hc,
        Client(streamable_http_client(url, http_client=hc)) as client,
    ):
        yield client


async def test_a_tokenless_caller_reads_public_rows_only(door: Door) -> None:
    async with tokenless(door.url) as client:
        public = await call(client, "find_entity", name="harbor", access_level="team")
        team = await call(client, "find_entity", name="lantern", access_level="team")
        private = await call(
            client, "find_entity", name="vault", access_level="private", include_private=True
        )
        me = await call(client, "describe_caller")
    assert [m["name"] for m in public["matches"]] == ["harbor"]
    assert public["meta"]["access_level"] == "public"
    assert "this caller may read up to public; answered at public" in public["meta"]["warnings"]
    assert team["matches"] == [] and private["matches"] == []
    assert "team only" not in json.dumps(team) and "mine" not in json.dumps(private)
    assert (me["member_id"], me["authenticated"], me["writes"]) == ("anonymous", False, "refused")


async def test_a_tokenless_caller_walks_public_rows_only(door: Door) -> None:
    async with tokenless(door.url) as client:
        walked = await call(
            client, "expand_neighbors", name=["harbor", "lantern", "vault"], access_level="team"
        )
        hidden = await refused(client, "fetch_slice", kind="entity", id="lantern")
        unknown = await refused(client, "fetch_slice", kind="entity", id="nowhere")
        shown = await call(client, "fetch_slice", kind="entity", id="harbor")
    assert [o.split(":")[2] for o in walked["origins"]] == ["harbor"]
    assert walked["unresolved"] == ["lantern", "vault"] and walked["meta"]["access_level"] == "public"
    assert (hidden["status"], unknown["status"]) == (404, 404)
    assert hidden["message"].replace("lantern", "X") == unknown["message"].replace("nowhere", "X")
    assert [p["content"] for p in shown["passages"]] == ["notes-bot: open"]


async def test_a_tokenless_caller_writes_nothing(door: Door) -> None:
    with Library.open(door.root) as library:
        before = library.head()
    async with tokenless(door.url) as client:
        rows = [{"name": "intruder", "type": "topic", "visibility": "public"}]
        write = await refused(client, "commit_to_federation", agent_id="notes-bot", entities=rows)
        new = await refused(
            client, "commit_to_federation", agent_id="anonymous", agent_type="other", entities=rows
        )
        versions = await refused(client, "list_memory_versions", agent_id="notes-bot")
        status = await refused(client, "memory_status")
        forgot = await refused(client, "forget", name="harbor")
    assert {write["status"], new["status"], versions["status"], status["status"]} == {403}
    assert forgot["status"] == 403
    assert "needs a member token" in write["message"]
    with Library.open(door.root) as library:
        assert library.head() == before
    assert sorted(p.name for p in (door.root / "agents").glob("*.l5.yaml")) == ["notes-bot.l5.yaml"]
    assert list((door.root / "staging").rglob("*.l5.yaml")) == []  # nothing staged either
    lines = [json.loads(line) for line in (door.home / "audit.jsonl").read_text().splitlines()]
    denied = [r for r in lines if r["caller"] == "anonymous" and r["op"] == "commit_to_federation"]
    assert len(denied) >= 2 and {r["decision"] for r in denied} == {"deny"}
    assert any(r["caller"] == "anonymous" and r["op"] == "find_entity" for r in lines)


def post(door: Door, headers: dict[str, str]) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    sent = {"accept": "application/json, text/event-stream", **headers}
    with httpx2.Client(timeout=30) as client:
        return int(client.post(door.url, json=body, headers=sent).status_code)


def test_a_wrong_token_is_still_refused(door: Door) -> None:
    assert post(door, {"authorization": "Bearer bdn_" + "0" * 48}) == 401
    assert post(door, {"authorization": "Basic YTpi"}) == 401


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("bourdon.example.test", 401),  # --allowed-host, without a port
        ("BOURDON.example.test:443", 401),  # any port, any case
        ("proxy.example.test", 401),  # $BOURDON_ALLOWED_HOSTS
        ("desk.tailnet.test:7500", 401),  # a wildcard from $BOURDON_ALLOWED_HOSTS
        ("evil.example.test", 421),
        ("bourdon.example.test.evil.test", 421),
    ],
)
def test_declared_hosts_are_answered_and_others_misdirected(
    door: Door, host: str, status: int
) -> None:
    # A wrong token: 401 shows the request got past the Host check.
    assert post(door, {"host": host, "authorization": "Bearer bdn_" + "0" * 48}) == status


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://app.example.test", 401),  # --allowed-origin
        ("https://app.example.test:443", 401),  # the same origin, its port spelled out
        ("https://bourdon.example.test", 401),  # a page of a declared host
        ("http://app.example.test", 403),  # another scheme is another origin
        ("https://evil.example.test", 403),
    ],
)
def test_declared_origins_are_accepted_and_others_refused(
    door: Door, origin: str, status: int
) -> None:
    assert post(door, {"origin": origin, "authorization": "Bearer bdn_" + "0" * 48}) == status


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_allow_unauthenticated_off_loopback_does_not_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    host: str,
) -> None:
    import uvicorn

    started: list[object] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, *a, **k: started.append(self))
    MemberRegistry(tmp_path / ".bourdon").add("laptop", "trusted")  # so only the flag refuses
    monkeypatch.setenv("BOURDON_HOME", str(tmp_path / ".bourdon"))
    root = tmp_path / "lib"
    Library.init(root).close()
    code = main(["serve", "--library", str(root), "--transport", "http", "--host", host,
                 "--allow-unauthenticated", "--no-watch"])  # fmt: skip
    assert (code, started) == (2, [])
    assert capsys.readouterr().err.startswith(
        f"bourdon: --allow-unauthenticated serves on loopback only, not on --host {host}"
    )


@pytest.mark.parametrize("quiet", [False, True])
def test_the_http_serving_line_says_tokenless_requests_read_public_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], quiet: bool
) -> None:
    import logging

    import uvicorn

    started: list[tuple[str, int]] = []
    monkeypatch.setattr(
        uvicorn.Server,
        "run",
        lambda self, *a, **k: started.append((self.config.host, self.config.port)),
    )
    monkeypatch.setattr(logging, "basicConfig", lambda **kwargs: None)
    root = tmp_path / "lib"
    Library.init(root).close()
    argv = ["serve", "--transport", "http", "--port", "7", "--library", str(root), "--no-watch",
            "--allow-unauthenticated"] + (["--quiet"] if quiet else [])  # fmt: skip
    assert main(argv) == 0
    assert started == [("127.0.0.1", 7)]
    expected = (
        ""
        if quiet
        else f"bourdon: serving {root} (0 agents) at http://127.0.0.1:7/mcp, 0 active members, "
        "requests without a token read public rows only\n"
    )
    assert capsys.readouterr().err == expected
