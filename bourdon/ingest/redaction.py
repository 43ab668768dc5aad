"""Step 3 of the export: every string of the view redacted, each unchanged row only once.

A reader gives back the same rows export after export. A row this library object already
redacted (the same JSON: the same values of the same types, in the same order) is given back as
it came out then, and the secrets it held are counted again, so an export in a library kept
open (a server's) redacts only the rows that changed.

A process that opens the library for one export (a hook, ``bourdon export``) starts with no
such memo, and redacting a whole view is most of what such an export costs. So the rows found
clean (no secret in any string) are remembered across processes too, by a digest of their JSON,
in ``.bourdon/cache/redaction/<rules>.bin``: ``<rules>`` is a digest of the redaction code
itself, so rules that change in any way never trust what older ones found. A row found there
is given back as its JSON reads (a copy of the same values); any other row is redacted. Only
clean rows are remembered: a row that held a secret is redacted again at every export, and
the file never holds more than digests. It is a cache: lost or garbled, it reads as empty.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from bourdon.access import redact, secretrules
from bourdon.access.redact import Findings, Redactor
from bourdon.model import LOCAL_DIR, ROW_SECTIONS
from bourdon.store.durable import atomic_write

_LIMIT: Final = 20_000  # rows remembered per library; emptied when full
_DIGEST: Final = 16  # bytes of a clean row's digest on disk
_CLEAN_LIMIT: Final = 50_000  # digests kept on disk; past it the file starts again


class _Memo:
    """What one library object remembers: each redacted row by its JSON (with the kinds of
    secret it held), and the digests of the rows known clean, on disk and since."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Any, dict[str, int]]] = {}
        self.clean: set[bytes] | None = None  # loaded at the first export with a place
        self.learned = False


# library object -> its memo
_MEMOS: weakref.WeakKeyDictionary[object, _Memo] = weakref.WeakKeyDictionary()


def clean_rows_path(root: Path) -> Path:
    """Where the library at ``root`` keeps the digests of the rows found clean."""
    return root / LOCAL_DIR / "cache" / "redaction" / f"{_rules()}.bin"


def redact_view(
    view: Mapping[str, Any],
    owner: object,
    clean_rows: Path | None = None,
    *,
    remember: bool = True,
) -> tuple[dict[str, Any], Findings]:
    """``redact_manifest(view)``: the same copy and the same findings, remembering the rows
    for the next export into the library object ``owner``, and the clean ones in the file
    ``clean_rows`` (``clean_rows_path``) for the next process; ``remember=False`` (a dry
    run) only reads that file."""
    memo = _MEMOS.get(owner)
    if memo is None:
        memo = _MEMOS[owner] = _Memo()
    if len(memo.rows) > _LIMIT:
        memo.rows.clear()
    if clean_rows is not None and memo.clean is None:
        memo.clean = _load(clean_rows)
    findings = Findings()
    out: dict[str, Any] = {}
    redactor = Redactor()  # one for the view: the same strings come back in many rows
    for key, value in view.items():
        if key not in ROW_SECTIONS or not isinstance(value, list):
            redactor.findings = Findings()
            out[redactor.text(key)] = redactor.value(value)
            findings.kinds.update(redactor.findings.kinds)
            continue
        rows = []
        for row in value:
            red, kinds = _row(row, memo, redactor)
            findings.kinds.update(kinds)
            rows.append(red)
        out[key] = rows  # a section's name is one of ours: nothing in it to redact
    if remember and clean_rows is not None and memo.learned and memo.clean is not None:
        _save(clean_rows, memo.clean)
        memo.learned = False
    return out, findings


def _row(row: object, memo: _Memo, redactor: Redactor) -> tuple[Any, dict[str, int]]:
    try:
        text = json.dumps(row, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: redacted each time
        text = None
    if text is None:
        redactor.findings = Findings()
        return redactor.value(row), dict(redactor.findings.kinds)
    hit = memo.rows.get(text)
    if hit is not None:
        return hit
    clean = memo.clean
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST).digest()
    if clean is not None and key in clean:
        done: tuple[Any, dict[str, int]] = (json.loads(text), {})
    else:
        redactor.findings = Findings()  # what this row holds, counted on its own
        done = (redactor.value(row), dict(redactor.findings.kinds))
        if clean is not None and not done[1]:
            clean.add(key)
            memo.learned = True
    memo.rows[text] = done
    return done


@functools.cache
def _rules() -> str:
    """A digest of the redaction code: its rules, their gates and the trigger together."""
    basis = hashlib.sha256(redact.RULES_VERSION.encode())
    for module in (redact, secretrules):
        try:
            basis.update(Path(str(module.__file__)).read_bytes())
        except (OSError, TypeError):  # no source to read: the version alone, and ours
            from bourdon import __version__

            basis.update(__version__.encode())
    return basis.hexdigest()[:16]


def _load(path: Path) -> set[bytes]:
    try:
        raw = path.read_bytes()
    except OSError:
        return set()
    if len(raw) % _DIGEST:
        return set()  # cut short or not ours: start again
    return {raw[i : i + _DIGEST] for i in range(0, len(raw), _DIGEST)}


def _save(path: Path, clean: set[bytes]) -> None:
    with contextlib.suppress(OSError):  # a cache: not kept is only slower
        if len(clean) > _CLEAN_LIMIT:
            # Rows gone long ago pile up: start again, the next exports find the live ones.
            clean.clear()
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, b"".join(sorted(clean)), 0o600, sync=False)
