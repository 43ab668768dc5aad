"""``export-all``: every registered reader's store exported into one library, one at a time.

A reader that fails does not stop the others: its entry says ``failed`` and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import BourdonError
from bourdon.ingest.outcome import GOOD_OUTCOMES, MISSING, ExportResult
from bourdon.ingest.pipeline import export_reader

if TYPE_CHECKING:
    from bourdon.readers.base import Reader, ReaderContext
    from bourdon.store.library import Library

FAILED: Final = "failed"  # the reader (or the export of its view) raised

# (position from 1, how many, reader name): an export is about to start.
Started = Callable[[int, int, str], None]
# (position, how many, reader name, its result or None, why it failed or None): it ended.
Finished = Callable[[int, int, str, ExportResult | None, str | None], None]


def export_all(
    library: Library,
    readers: Mapping[str, Reader],
    ctx: ReaderContext,
    *,
    force: bool = False,
    started: Started | None = None,
    finished: Finished | None = None,
) -> list[dict[str, Any]]:
    """Export each reader in name order; each entry is ``ExportResult.to_dict()`` or a failure."""
    results: list[dict[str, Any]] = []
    names = sorted(readers)
    for i, name in enumerate(names, 1):
        if started is not None:
            started(i, len(names), name)
        try:
            result = export_reader(library, readers[name], ctx, force=force)
        except BourdonError as exc:
            message = exc.message
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
        else:
            results.append(result.to_dict())
            if finished is not None:
                finished(i, len(names), name, result, None)
            continue
        results.append({"reader": name, "agent_id": name, "outcome": FAILED, "reason": message})
        if finished is not None:
            finished(i, len(names), name, None, message)
    return results


def failed(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries that failed or were refused (a reader without a store here is no failure)."""
    return [r for r in results if r["outcome"] not in GOOD_OUTCOMES | {MISSING}]
