"""Redaction on every write path, checked in the manifests and in every git object; and a clean
corpus of ordinary code (Python's standard library, not written for these tests) left intact."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from bourdon.access.redact import redact_text
from bourdon.cli.main import main
from bourdon.replicate.remotes import add_remote
from bourdon.replicate.sync import sync
from bourdon.serve.writes.commit import commit_to_federation
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing.remotes import bare_repository
from tests.test_redact_providers import ISSUE_FORMATS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SECRETS = [(label, text, secret) for label, text, secret in ISSUE_FORMATS]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, check=True
    ).stdout.decode("utf-8", "replace")


def every_object(root: Path) -> str:
    return git(root, "log", "-p", "--all", "--format=%H%n%B") + git(
        root, "cat-file", "--batch-all-objects", "--batch"
    )


def leaked(haystack: str) -> list[str]:
    return [label for label, _, secret in SECRETS if secret in haystack]


def change(agent_type: str | None = "code-assistant") -> dict[str, Any]:
    rows = [
        {"name": f"note-{i}", "summary": text, "visibility": "team"}
        for i, (_, text, _) in enumerate(SECRETS)
    ]
    out: dict[str, Any] = {
        "known_entities": rows,
        "notes": [{"date": "2026-11-01", "text": SECRETS[0][1]}],
    }
    if agent_type:
        out["agent"] = {"type": agent_type}
    return out


def test_the_clean_corpus_of_standard_library_lines_stays_intact() -> None:
    lines = json.loads((FIXTURES / "clean" / "stdlib_lines.json").read_text(encoding="utf-8"))
    texts = [line["text"] for line in lines["lines"]] + ["password=form.password"]
    assert len(texts) >= 50
    assert (
        sum(
            any(w in t.lower() for w in ("password", "passwd", "token", "secret", "key"))
            for t in texts
        )
        >= 30
    )
    altered = [t for t in texts if redact_text(t) != t]
    assert len(altered) <= 1, altered


def test_commit_to_federation_redacts_live_and_staged_writes(library: Library) -> None:
    who = Provenance(caller="desk-chat")
    commit_to_federation(library, "mcp-agent", change(), mode="merge", expected_digest=None,
                         provenance=who, staged=False)  # fmt: skip
    commit_to_federation(library, "desk-chat", change(), mode="merge", expected_digest=None,
                         provenance=who, staged=True)  # fmt: skip
    assert "[redacted:" in library.read_bytes("mcp-agent").decode()
    assert leaked(every_object(library.root)) == []


def test_a_key_committed_over_mcp_never_reaches_git(tmp_path: Path, isolated_home: Path) -> None:
    """Through the real MCP client and server, as an agent would call the tool."""
    import anyio
    from mcp import Client

    from bourdon.serve.server import create_server

    Library.init(tmp_path / "lib").close()
    root = tmp_path / "lib"
    rows = change(agent_type=None)

    async def run() -> None:
        async with Client(create_server(root, watch=False)) as client:
            result = await client.call_tool(
                "commit_to_federation",
                {"agent_id": "notes-bot", "agent_type": "other", "entities": rows["known_entities"],
                 "notes": rows["notes"]},
            )  # fmt: skip
            assert not result.is_error, result.content

    anyio.run(run)
    assert "[redacted:" in (root / "agents" / "notes-bot.l5.yaml").read_text(encoding="utf-8")
    assert leaked(every_object(root)) == []


def test_bourdon_commit_redacts(library: Library, tmp_path: Path, isolated_home: Path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps(change()), encoding="utf-8")
    assert main(["--library", str(library.root), "commit", "cli-agent", "--file", str(rows)]) == 0
    assert "[redacted:" in library.read_bytes("cli-agent").decode()
    assert leaked(every_object(library.root)) == []


def test_promote_redacts_a_staged_file_written_without_redaction(
    library: Library, isolated_home: Path
) -> None:
    # Library.stage itself does not redact: this is a staged file a person edited by hand.
    library.stage("desk-chat", "desk-chat", change(), Provenance(caller="desk-chat"))
    staged_commit = library.head()
    assert main(["--library", str(library.root), "staging", "promote", "desk-chat"]) == 0
    assert "[redacted:" in library.read_bytes("desk-chat").decode()
    # The hand-edited staged file stays in the history it was committed to; what promotion
    # wrote (the live manifest, in the promotion's commit) holds none of its secrets.
    promoted = git(library.root, "diff", str(staged_commit), "HEAD", "--", "agents/")
    tree = git(library.root, "show", "HEAD:agents/desk-chat.l5.yaml")
    assert leaked(promoted + tree) == []


def test_sync_redacts_what_a_remote_sends(tmp_path: Path) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    sender = Library.init(tmp_path / "sender", machine="sender")
    receiver = Library.init(tmp_path / "receiver", machine="receiver")
    try:
        for lib in (sender, receiver):
            add_remote(lib, "origin", str(remote))
        # A peer that does not redact (an older bourdon, or a hand push) publishes secrets.
        sender.commit("peer-agent", change(), provenance=Provenance(caller="peer"))
        sync(sender, "origin")
        sync(receiver, "origin")
        assert "[redacted:" in receiver.read_bytes("peer-agent").decode()
        own = git(receiver.root, "log", "-p", "--first-parent", "main", "--format=%H%n%B")
        assert leaked(own + git(receiver.root, "show", "HEAD:agents/peer-agent.l5.yaml")) == []
        sync(receiver, "origin")  # what the receiver publishes back is redacted too
        published = git(remote, "show", "bourdon/published:agents/peer-agent.l5.yaml")
        assert leaked(published) == []
    finally:
        sender.close()
        receiver.close()
