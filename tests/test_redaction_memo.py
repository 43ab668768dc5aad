"""The rows an export found clean, remembered across processes (``ingest.redaction``).

A hook or ``bourdon export`` opens the library for one export; the rows it finds clean are kept
by digest in ``.bourdon/cache/redaction/`` so the next process does not redact them again. What
a user must never notice: a secret that reaches a row later is still redacted, a row that held
a secret is never taken for clean, the findings are counted as before, the memo changes nothing
of what is committed, and a memo that is garbled, or was made by other rules, is not trusted.

Each export opens its own ``Library`` object, as each hook process does (the in-process memo
lives as long as the library object). The secrets are the synthetic corpus of
``tests/fixtures/secrets`` (shaped like real providers' formats).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bourdon.access import redact
from bourdon.ingest import redaction
from bourdon.ingest.pipeline import export_reader
from bourdon.ingest.redaction import clean_rows_path
from bourdon.readers.base import Health, ReaderContext, ReadResult, ReadStats, default_health
from bourdon.store.library import Library

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "secrets"
with open(FIXTURES / "secrets.jsonl", encoding="utf-8") as handle:
    CORPUS = [json.loads(line) for line in handle if line.strip()]
# One secret of each of a few kinds, planted in its carrier sentence.
PLANTED = {
    e["kind"]: str(e["carrier"]).format(secret="".join(e["parts"]))
    for e in CORPUS
    if e["kind"] in ("anthropic-key", "github-token", "aws-access-key", "slack-token")
}


class FileReader:
    """A reader whose store is one JSON file: the view as it is, so a test edits the rows."""

    name = "memo-agent"
    agent_type = "code-assistant"
    store_env = "MEMO_AGENT_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return [ctx.home / ".memo-agent.json"]

    def read(self, ctx: ReaderContext) -> ReadResult:
        view = json.loads((ctx.home / ".memo-agent.json").read_text(encoding="utf-8"))
        return ReadResult(view, ReadStats(files=1))

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)


def entities(summaries: list[str]) -> dict[str, Any]:
    return {
        "agent": {"instance": "memo on test"},
        "known_entities": [
            {"name": f"entity-{i}", "summary": text} for i, text in enumerate(summaries)
        ],
    }


def export(root: Path, home: Path, view: dict[str, Any], **options: Any) -> Any:
    """Write the store, then export it as a new process would: a library object of its own."""
    (home / ".memo-agent.json").write_text(json.dumps(view), encoding="utf-8")
    library = Library.open(root)
    try:
        return export_reader(library, FileReader(), ReaderContext(home=home), **options)
    finally:
        library.close()


def committed(root: Path) -> str:
    """The agent's manifest as the library holds it."""
    library = Library.open(root)
    try:
        return library.read_bytes("memo-agent").decode("utf-8")
    finally:
        library.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Library.init(tmp_path / "lib").close()
    return tmp_path / "lib"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


CLEAN = [f"a parser for ledger line {i}" for i in range(6)]


def test_clean_rows_are_remembered_for_the_next_process(root: Path, home: Path) -> None:
    assert export(root, home, entities(CLEAN)).outcome == "committed"
    kept = clean_rows_path(root, "memo-agent").read_bytes()
    assert len(kept) == 16 * len(CLEAN)  # a digest per clean row, nothing of their text
    assert not any(text.encode() in kept for text in CLEAN)


def test_a_secret_that_reaches_a_remembered_row_is_redacted(root: Path, home: Path) -> None:
    export(root, home, entities(CLEAN))
    secret = PLANTED["anthropic-key"]
    result = export(root, home, entities([*CLEAN[:2], secret, *CLEAN[3:]]))
    assert result.outcome == "committed"
    assert result.redacted == {"anthropic-key": 1}
    manifest = committed(root)
    assert "[redacted:anthropic-key]" in manifest
    assert secret not in manifest


def test_a_row_that_held_a_secret_is_redacted_and_counted_at_every_export(
    root: Path, home: Path
) -> None:
    with_secrets = entities([*CLEAN, *PLANTED.values()])
    first = export(root, home, with_secrets)
    again = export(root, home, with_secrets, force=True)  # read again, its rows unchanged
    assert first.redacted == again.redacted == dict.fromkeys(PLANTED, 1)
    assert len(clean_rows_path(root, "memo-agent").read_bytes()) == 16 * len(
        CLEAN
    )  # the clean ones only
    manifest = committed(root)
    assert not any(text in manifest for text in PLANTED.values())


def test_the_memo_changes_nothing_that_is_committed(tmp_path: Path, home: Path) -> None:
    roots = []
    for name in ("with-memo", "without"):
        Library.init(tmp_path / name).close()
        roots.append(tmp_path / name)
    views = [
        entities([*CLEAN, PLANTED["github-token"]]),
        entities([*CLEAN, PLANTED["github-token"], "one more row"]),
        entities([*CLEAN[1:], PLANTED["slack-token"], "one more row"]),
    ]
    for view in views:
        results = []
        for where in roots:
            if where.name == "without":
                clean_rows_path(where, "memo-agent").unlink(missing_ok=True)
            results.append(export(where, home, view))
        assert [r.outcome for r in results] == ["committed", "committed"]
        assert results[0].redacted == results[1].redacted
        assert results[0].added == results[1].added and results[0].removed == results[1].removed
        # The same manifest, but for the moment each was written at.
        texts = [yaml.safe_load(committed(r)) for r in roots]
        for text in texts:
            text.pop("last_updated")
        assert texts[0] == texts[1]
    assert clean_rows_path(roots[0], "memo-agent").exists()


@pytest.mark.parametrize("garbage", [b"\x00" * 7, b"\xff" * 32, b"not a digest file at all!"])
def test_a_garbled_memo_is_not_trusted(root: Path, home: Path, garbage: bytes) -> None:
    path = clean_rows_path(root, "memo-agent")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(garbage)
    result = export(root, home, entities([*CLEAN, PLANTED["aws-access-key"]]))
    assert result.outcome == "committed"
    assert result.redacted == {"aws-access-key": 1}
    assert PLANTED["aws-access-key"] not in committed(root)


def test_what_other_rules_found_clean_is_not_trusted(
    root: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rules that change in any way keep their own memo: a row older rules took for clean (here,
    one holding a secret they did not know) is redacted by the new ones."""
    row = {"name": "entity-0", "summary": PLANTED["anthropic-key"]}
    older = clean_rows_path(root, "memo-agent").with_name("memo-agent.0123456789abcdef.bin")
    older.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(row, ensure_ascii=False).encode()
    older.write_bytes(hashlib.blake2b(text, digest_size=16).digest())
    result = export(root, home, {"agent": {"instance": "memo"}, "known_entities": [row]})
    assert result.redacted == {"anthropic-key": 1}
    # The memo's name follows the rules: another version of them, another file.
    monkeypatch.setattr(redact, "RULES_VERSION", redact.RULES_VERSION + "-next")
    assert redaction._rules.__wrapped__() != redaction._rules()


def test_a_dry_run_remembers_nothing(root: Path, home: Path) -> None:
    assert export(root, home, entities(CLEAN), dry_run=True).outcome == "dry_run"
    assert not clean_rows_path(root, "memo-agent").exists()
