"""Step 3 of the export: every string of the view redacted, each unchanged row only once.

A reader gives back the same rows export after export. A row this library object already
redacted (the same JSON: the same values of the same types, in the same order) is given back as
it came out then, and the secrets it held are counted again, so an export in a library kept
open (a server's) redacts only the rows that changed.

A process that opens the library for one export (a hook, ``bourdon export``) starts with no
such memo, and redacting a whole view is most of what such an export costs. So the rows found
clean (no secret in any string) are remembered across processes too, by a digest of their JSON,
in ``.bourdon/cache/redaction/<reader>.<rules>.bin``: ``<rules>`` is a digest of the redaction
code itself, so rules that change in any way never trust what older ones found. A row found
there is given back as its JSON reads (a copy of the same values); any other row is redacted.
Only the clean rows of the reader's last view are kept: a row that held a secret is redacted
again at every export, and the file never holds more than digests, nor grows past the view.
It is a cache: lost or garbled, it reads as empty.
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

from bourdon import __version__
from bourdon.access import redact, secretrules
from bourdon.access.redact import Findings, Redactor
from bourdon.model import LOCAL_DIR, ROW_SECTIONS, check_agent_id
from bourdon.store.durable import atomic_write

_LIMIT: Final = 20_000  # rows remembered per library; emptied when full
_DIGEST: Final = 16  # bytes of a clean row's digest on disk

# A redacted row: the copy, the kinds of secret it held, and its digest (``None``: not JSON).
Done = tuple[Any, dict[str, int], bytes | None]
# library object -> a row's JSON -> the row redacted
_MEMOS: weakref.WeakKeyDictionary[object, dict[str, Done]] = weakref.WeakKeyDictionary()


def clean_rows_path(root: Path, reader: str) -> Path:
    """Where the library at ``root`` keeps the digests of the rows of ``reader``'s last view
    found clean."""
    name = check_agent_id(reader, "reader name")
    return root / LOCAL_DIR / "cache" / "redaction" / f"{name}.{_rules()}.bin"


def redact_view(
    view: Mapping[str, Any],
    owner: object,
    clean_rows: Path | None = None,
    *,
    remember: bool = True,
) -> tuple[dict[str, Any], Findings]:
    """``redact_manifest(view)``: the same copy and the same findings, remembering the rows
    for the next export into the library object ``owner``, and the digests of the clean ones
    in the file ``clean_rows`` (``clean_rows_path``) for the next process; ``remember=False``
    (a dry run) only reads that file."""
    memo = _MEMOS.setdefault(owner, {})
    if len(memo) > _LIMIT:
        memo.clear()
    known = _load(clean_rows) if clean_rows is not None else None
    clean: set[bytes] = set()  # this view's: the file holds no row the reader no longer gives
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
            red, kinds, digest = _row(row, memo, redactor, known)
            findings.kinds.update(kinds)
            if digest is not None and not kinds:
                clean.add(digest)
            rows.append(red)
        out[key] = rows  # a section's name is one of ours: nothing in it to redact
    if remember and clean_rows is not None and clean != known:
        _save(clean_rows, clean)
    return out, findings


def _row(row: object, memo: dict[str, Done], redactor: Redactor, known: set[bytes] | None) -> Done:
    try:
        text = json.dumps(row, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: redacted each time
        return (*_redacted(row, redactor), None)
    done = memo.get(text)
    if done is None:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST)
        key = digest.digest()
        if known is not None and key in known:
            done = (json.loads(text), {}, key)
        else:
            done = (*_redacted(row, redactor), key)
        memo[text] = done
    return done


def _redacted(row: object, redactor: Redactor) -> tuple[Any, dict[str, int]]:
    redactor.findings = Findings()  # what this row holds, counted on its own
    return redactor.value(row), dict(redactor.findings.kinds)


@functools.cache
def _rules() -> str:
    """A digest of the redaction code: its rules, their gates and the trigger together."""
    basis = hashlib.sha256(redact.RULES_VERSION.encode())
    for module in (redact, secretrules):
        try:
            basis.update(Path(str(module.__file__)).read_bytes())
        except (OSError, TypeError):  # no source to read: the version alone, and ours
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
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, b"".join(sorted(clean)), 0o600, sync=False)
