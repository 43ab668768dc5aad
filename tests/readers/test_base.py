"""The JSON readers every reader shares survive lines and files nested too deep to parse."""

from __future__ import annotations

import json
from pathlib import Path

from bourdon.readers.base import ReadStats, iter_jsonl, load_json

DEEP = b"[" * 5000 + b"]" * 5000  # json.loads raises RecursionError, not ValueError, on this


def test_a_line_nested_too_deep_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n": 1}\n{"deep": ' + DEEP + b'}\n{"n": 2}\n')
    stats = ReadStats()
    assert list(iter_jsonl(path, stats)) == [{"n": 1}, {"n": 2}]
    assert (stats.records, stats.skipped) == (2, 1)


def test_a_whole_file_nested_too_deep_is_skipped_with_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    path.write_bytes(DEEP)
    stats = ReadStats()
    assert load_json(path, stats) is None
    assert stats.skipped == 1 and "not valid JSON" in " ".join(stats.problems)
    path.write_text(json.dumps({"ok": [1]}))
    assert load_json(path, ReadStats()) == {"ok": [1]}
