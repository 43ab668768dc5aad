"""What the agents' hooks run: the export after a turn, and the context at a turn's start.

The surface (``bourdon hook ...``) finds the library, reads the hook's JSON and makes sure a
failure never breaks the agent's turn; these functions do the work and raise on failure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.errors import BourdonError
from bourdon.ingest.outcome import MISSING, REFUSED
from bourdon.ingest.pipeline import check, export_reader

if TYPE_CHECKING:
    from bourdon.readers.base import Reader, ReaderContext
    from bourdon.store.library import Library


def hook_export(
    root: Path,
    reader: Reader,
    ctx: ReaderContext,
    event: Mapping[str, Any],
    open_library: Callable[[], Library],
) -> None:
    """Export ``reader``'s store into the library at ``root`` for the hook event ``event``.

    A store with nothing new returns at once, before the library (with its git and schema
    machinery) is opened. The commit names the agent's session and transcript when the event
    carries them. Raises ``BourdonError`` when the export is refused or finds no store.
    """
    quick, seen = check(root, reader, ctx)
    if quick is not None:  # nothing new: no library, git or schema
        return
    from bourdon.store.provenance import Provenance

    session = event.get("session_id") or event.get("conversation_id")
    transcript = event.get("transcript_path")
    who = Provenance(
        caller=f"reader:{reader.name}",
        session=str(session)[:128] if isinstance(session, str) and session else None,
        transcript=str(transcript)[:512] if isinstance(transcript, str) and transcript else None,
        machine=ctx.machine,
    )
    library = open_library()
    try:
        # The store was just looked at: the export goes on from there, not looking again.
        result = export_reader(library, reader, ctx, provenance=who, seen=seen)
    finally:
        library.close()
    if result.outcome == REFUSED:
        raise BourdonError(f"export refused: {result.reason}")
    if result.outcome == MISSING:
        raise BourdonError(f"{result.reason}; see 'bourdon readers'")


def turn_context(root: Path, prompt: str, agent: str | None = None) -> str:
    """What the library's team view recognises in ``prompt``, as turn-start context (or "");
    ``agent``'s own rows are not presented as what the other agents know."""
    from bourdon.query.context import prepare_recognition_context
    from bourdon.query.index import Index

    index = Index(root.absolute())
    index.refresh()
    answer = prepare_recognition_context(index, prompt, "team", False, agent=agent)
    return str(answer["prompt_context"])
