"""Secret redaction (reliability-and-security R14): the corpus never reaches the library.

``tests/fixtures/secrets/secrets.jsonl`` holds synthetic secrets shaped like the real formats
of 20+ providers (random, never real; stored split so scanners do not flag the repository), and
``clean.jsonl`` ordinary strings (code, git SHAs, UUIDs, base64, URLs, hex ids, paths, prose).
Regenerate both with ``python tests/fixtures/secrets/generate.py``.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.redact import Redactor, find_secrets, looks_random, redact_manifest, redact_text
from bourdon.cli.main import main
from bourdon.ingest.failures import hook_failures, hook_failures_path
from bourdon.ingest.pipeline import export_reader
from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
)
from bourdon.store.library import Library

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "secrets"


def load(name: str) -> list[dict[str, Any]]:
    with open(FIXTURES / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


SECRETS = load("secrets.jsonl")
CLEAN = load("clean.jsonl")


def secret(entry: dict[str, Any]) -> str:
    return "".join(entry["parts"])


def planted(entry: dict[str, Any]) -> str:
    return str(entry["carrier"]).format(secret=secret(entry))


def windows(entry: dict[str, Any], size: int = 12) -> list[str]:
    """The secret and every 12-character piece of its random part: none may leak, not even cut."""
    body = str(entry["body"])
    pieces = {secret(entry), body}
    pieces |= {body[i : i + size] for i in range(0, max(1, len(body) - size + 1), 4)}
    return sorted(pieces)


def test_the_corpus_has_at_least_60_secrets_of_20_providers() -> None:
    assert len(SECRETS) >= 60
    providers = Counter(e["provider"] for e in SECRETS)
    assert len(providers) >= 20
    for required in (
        "anthropic", "openai", "github", "gitlab", "aws", "google", "slack", "stripe",
        "huggingface", "npm", "pypi", "twilio", "sendgrid", "azure", "digitalocean", "discord",
        "telegram", "jwt", "private-key", "url-credentials", "password",
    ):  # fmt: skip
        assert providers[required] >= 1, required
    assert len({secret(e) for e in SECRETS}) == len(SECRETS)


def test_the_corpus_files_hold_no_secret_literally() -> None:
    raw = (FIXTURES / "secrets.jsonl").read_text(encoding="utf-8")
    prefixed = [e for e in SECRETS if len(e["parts"]) > 1]
    assert len(prefixed) >= 40
    for entry in prefixed:
        assert secret(entry) not in raw


@pytest.mark.parametrize("entry", SECRETS, ids=lambda e: f"{e['provider']}-{e['kind']}")
def test_every_secret_is_redacted_with_its_kind(entry: dict[str, Any]) -> None:
    text = planted(entry)
    out = redact_text(text)
    for piece in windows(entry):
        assert piece not in out
    assert f"[redacted:{entry['kind']}]" in out
    assert entry["kind"] in find_secrets(text)


def test_the_clean_corpus_has_at_most_2_percent_false_positives() -> None:
    assert len(CLEAN) >= 300
    assert {e["category"] for e in CLEAN} >= {
        "code", "git-sha", "uuid", "base64", "url", "hex-id", "path", "prose",
    }  # fmt: skip
    flagged = [e["text"] for e in CLEAN if redact_text(e["text"]) != e["text"]]
    assert len(flagged) / len(CLEAN) <= 0.02, flagged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPENAI_API_KEY=a8f5f167f44f4964e6c998dee827110c", "OPENAI_API_KEY=[redacted:secret]"),
        ("password=hunter2", "password=[redacted:password]"),
        ('{"password": "s3cr3t!"}', '{"password": "[redacted:password]"}'),
        ("password = get_password()", "password = get_password()"),
        ("password: ${DB_PASSWORD}", "password: ${DB_PASSWORD}"),
        ("postgres://admin:pw1234@db:5432/x", "postgres://[redacted:url-credentials]@db:5432/x"),
        ("ssh://git@github.com/a/b.git", "ssh://git@github.com/a/b.git"),
        (
            "Authorization: Bearer abcDEF123456ghiJKL789mno",
            "Authorization: Bearer [redacted:authorization-header]",
        ),
        (
            "token = request.headers.get('Authorization')",
            "token = request.headers.get('Authorization')",
        ),
        (
            "cache key 5d41402abc4b2a76b9719d911017c592",
            "cache key 5d41402abc4b2a76b9719d911017c592",
        ),
        ("the desk-lamp sk-learn task-runner", "the desk-lamp sk-learn task-runner"),
        (
            "-----BEGIN PUBLIC KEY----- MFkwEwYHKoZIzj0CAQYIKoZI",
            "-----BEGIN PUBLIC KEY----- MFkwEwYHKoZIzj0CAQYIKoZI",
        ),
    ],
)
def test_context_rules(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_a_private_key_cut_short_by_a_reader_is_still_redacted() -> None:
    entry = next(e for e in SECRETS if e["kind"] == "private-key")
    cut = clean_text(planted(entry))  # one line, cut to 256 characters like a key action
    out = redact_text(cut)
    assert "[redacted:private-key]" in out
    for piece in windows(entry):
        assert piece not in out


def test_redaction_is_idempotent_and_never_outgrows_its_field() -> None:
    for entry in SECRETS:
        once = redact_text(planted(entry))
        assert redact_text(once) == once
    tiny = "pw=ab12"
    assert len(redact_text("password=abc")) <= 64 and len(redact_text(tiny)) <= 64
    line = "x" * 240 + " password=hunter22"
    out = redact_text(line)
    assert len(out) <= len(line) and "hunter22" not in out


def test_looks_random_tells_tokens_from_identifiers() -> None:
    assert looks_random("aB3dE5gH7jK9mN1pQ3rS")
    assert not looks_random("settings.OPENAI_API_KEY")
    assert not looks_random("config.auth.token_refresh")
    assert not looks_random("/etc/app/v2/config-2024.yaml")
    assert not looks_random("short1A")


def test_redact_manifest_walks_every_string_and_counts_kinds() -> None:
    key = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
    data = {
        "agent": {"id": "a", "type": "other", "instance": key},
        "known_entities": [{"name": "n", "aliases": [key], "tags": ["t"], "count": 3}],
        key: "a key in a key",
    }
    out, findings = redact_manifest(data)
    assert key not in json.dumps(out)
    assert findings.to_dict() == {"github-token": 3}
    assert out["known_entities"][0]["count"] == 3
    redactor = Redactor()
    assert redactor.value([key, key]) == ["[redacted:github-token]"] * 2
    assert redactor.findings.total == 2


# -- end to end: nothing reaches a manifest, a file or a git object ---------------------------


class PlantingReader:
    """A reader whose store is the secret corpus, planted in every kind of field."""

    name = "leaky-agent"
    agent_type = "code-assistant"
    store_env = "LEAKY_AGENT_STORE"

    def __init__(self, fail_with: str | None = None) -> None:
        self.fail_with = fail_with

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return [ctx.home / ".leaky"]

    def read(self, ctx: ReaderContext) -> ReadResult:
        if self.fail_with:
            raise RuntimeError(self.fail_with)
        sessions: list[dict[str, Any]] = []
        entities: list[dict[str, Any]] = []
        notes: list[dict[str, Any]] = []
        workstreams: list[dict[str, Any]] = []
        for i, entry in enumerate(SECRETS):
            text = planted(entry)
            spot = i % 6
            if spot == 0 or len(text) > 250:
                notes.append({"date": "2026-11-01", "text": text, "tags": ["leak"]})
            elif spot == 1:
                sessions.append(
                    {"date": "2026-11-02", "cwd": f"/w/{i}", "key_actions": [clean_text(text)]}
                )
            elif spot == 2:
                entities.append({"name": f"entity-{i}", "summary": text})
            elif spot == 3:
                sessions.append(
                    {
                        "date": "2026-11-03",
                        "cwd": f"/w/{i}",
                        "files_touched": [f"/home/dana/{text}"],
                    }
                )
            elif spot == 4:
                workstreams.append({"name": f"ws-{i}", "status": "active", "summary": text})
            else:
                entities.append({"name": f"entity-{i}", "aliases": [text[:120]]})
        view = {
            "agent": {"instance": "leaky on test"},
            "known_entities": entities,
            "recent_sessions": sessions,
            "known_workstreams": workstreams,
            "notes": notes,
        }
        return ReadResult(view, ReadStats(files=1, problems=[planted(SECRETS[0])]))

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True).stdout


def everything(root: Path) -> str:
    """Every byte the library holds: history as patches, every object, every file on disk."""
    parts = [
        git(root, "log", "-p", "--all", "--format=%H%n%B"),
        git(root, "cat-file", "--batch-all-objects", "--batch"),
    ]
    for path in sorted(root.rglob("*")):
        if path.is_file() and "objects" not in path.relative_to(root).parts[:2]:
            parts.append(path.read_bytes())
    return b"\n".join(parts).decode("utf-8", "replace")


def test_no_secret_reaches_a_manifest_a_file_or_any_git_object(
    library: Library,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (isolated_home / ".leaky").mkdir()
    (isolated_home / ".leaky" / "store.db").write_bytes(b"the native store")
    ctx = ReaderContext(home=isolated_home, machine="test-box")
    result = export_reader(library, PlantingReader(), ctx)
    assert result.outcome == "committed"
    assert sum(result.redacted.values()) >= len(SECRETS)
    assert set(result.redacted) >= {e["kind"] for e in SECRETS}

    # The same view through the CLI: a dry run prints row names, JSON prints the result.
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers",
        lambda only=None: ({"leaky-agent": PlantingReader()}, []),
    )
    main(["--library", str(library.root), "export", "leaky-agent", "--dry-run", "--force"])
    main(["--library", str(library.root), "export", "leaky-agent", "--force", "--json"])
    # A reader failing with a secret in its message: the hook records the failure, redacted.
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers",
        lambda only=None: ({"leaky-agent": PlantingReader(fail_with=planted(SECRETS[1]))}, []),
    )
    (isolated_home / ".leaky" / "store.db").write_bytes(b"the native store, grown")
    assert main(["--library", str(library.root), "hook", "export", "leaky-agent"]) == 0
    [failure] = hook_failures(hook_failures_path(library.root))
    assert "[redacted:" in failure["error"]
    printed = capsys.readouterr()

    haystack = everything(library.root) + printed.out + printed.err
    assert "[redacted:anthropic-key]" in haystack  # the search does see the manifests
    leaked = [(e["provider"], piece) for e in SECRETS for piece in windows(e) if piece in haystack]
    assert leaked == []
    manifest = library.read_bytes("leaky-agent").decode()
    for kind in {e["kind"] for e in SECRETS}:
        assert f"[redacted:{kind}]" in manifest, kind


# -- keyword-gated shapes: a provider's value shape counts only where the provider is named ----

_SHA = "6d2fabeb6add229bc199faba28fd3efb57df0bd3"
_UUID = "12345678-abcd-abcd-abcd-1234567890ab"


@pytest.mark.parametrize(
    "text",
    [
        f"git checkout {_SHA}",
        f"Merge commit {_SHA} into main",
        f"request id {_UUID} took 3 ms",
        "summary: 14 files, superstition1 and suAbcdefgh1234",
        f"sourcegraph indexes the repo\ncommit {_SHA}",  # the keyword is on another line
    ],
)
def test_keyword_shapes_leave_ordinary_text_alone(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"sourcegraph token: {_SHA}", _SHA),
        (f"SRC_ACCESS_TOKEN={_SHA}  # sourcegraph", _SHA),
        (f'const MessageBirdClientID = "{_UUID}"', _UUID),
        ('SUMO_ACCESS_ID = "' + "su" + 'GyI5imvADdvU"', "su" + "GyI5imvADdvU"),
    ],
)
def test_keyword_shapes_are_redacted_where_the_provider_is_named(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and "[redacted:" in out, out
    assert redact_text(out) == out
