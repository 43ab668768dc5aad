"""What Gemini CLI and its fork Qwen Code still write alike: content parts, edit tools, memory.

Their chat recordings differ (Gemini CLI: ``ConversationRecord`` files under ``tmp/<id>/chats``
replayed with ``$set``/``$rewindTo``; Qwen Code: one ``ChatRecord`` tree per JSONL file under
``projects/<dir>/chats``), so each reader parses its own; what agrees is here:

- message content is ``@google/genai`` parts, a string or ``[{text} | {functionCall} | …]``
  [src google-gemini/gemini-cli:packages/core/src/services/chatRecordingService.ts,
  QwenLM/qwen-code:packages/core/src/services/chatRecordingService.ts];
- file edits are ``write_file``, ``replace`` (Qwen Code renamed it ``edit``) and ``smart_edit``
  with ``args.file_path``; a call whose status is ``error`` or ``cancelled`` edited nothing
  [src gemini-cli:packages/core/src/tools/tool-names.ts, qwen-code:…/tools/tool-names.ts];
- the context file (``GEMINI.md``, ``QWEN.md``) may hold a ``## <Agent> Added Memories``
  section of bullets that the ``save_memory`` tool appended: each bullet is a note, the rest
  of the file one more [src …/tools/memoryTool.ts, qwen-code:…/memory/const.ts].

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from bourdon.readers.base import ReaderContext, ReadStats, local_date, project_name
from bourdon.readers.common.assembly import NoteDraft
from bourdon.readers.common.files import bullets, read_memory_file

EDIT_TOOLS: Final = frozenset({"write_file", "replace", "edit", "smart_edit"})
FAILED: Final = frozenset({"error", "cancelled"})


def parts_text(content: object) -> str:
    """The text of a message's content: a string, one part or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def split_memories(text: str, heading: str) -> tuple[str, list[str]]:
    """The file without its ``heading`` section, and that section's bullets."""
    lines = text.replace("\r\n", "\n").split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        return text, []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[:start] + lines[end:]), bullets("\n".join(lines[start + 1 : end]))


def context_notes(
    path: Path,
    folder: str | None,
    ctx: ReaderContext,
    stats: ReadStats,
    *,
    heading: str,
    tags: tuple[str, str],
) -> list[NoteDraft]:
    """A context file (global when ``folder`` is None) as notes: one per added memory, tagged
    ``tags[0]``, and the rest of the file as one, tagged ``tags[1]``, headed by its name."""
    text, moment = read_memory_file(path, stats)
    if not text.strip() or moment is None:
        return []
    rest, memories = split_memories(text, heading)
    date, project = local_date(moment, ctx.tz), project_name(folder)
    where = str(path) if folder is None else folder
    notes = [NoteDraft(date, m, project, tags[0], where) for m in memories]
    if rest.strip():
        label = f"{path.name} for {project}" if folder else path.name
        notes.append(NoteDraft(date, f"{label}:\n{rest}", project, tags[1], where))
    return notes
