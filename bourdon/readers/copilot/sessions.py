"""One Copilot Chat session's replayed state as a session draft: its requests, their prompts, and
the files their responses, tool-call rounds and editing sessions changed.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from bourdon.readers.base import clean_text, normalize_path, parse_time
from bourdon.readers.common.assembly import Draft
from bourdon.readers.common.paths import safe_text, uri_path
from bourdon.readers.common.tools import patch_files, path_argument

# Response-part tool ids and model-facing tool names that edit files.
EDIT_TOOL_IDS: Final = frozenset(
    {
        "copilot_createFile",
        "copilot_replaceString",
        "copilot_multiReplaceString",
        "copilot_applyPatch",
        "copilot_insertEdit",
        "copilot_editFile",
        "copilot_editNotebook",
    }
)
EDIT_TOOL_NAMES: Final = frozenset(
    {
        "create_file",
        "replace_string_in_file",
        "multi_replace_string_in_file",
        "apply_patch",
        "insert_edit_into_file",
        "edit_file",
        "edit_notebook_file",
    }
)
_LINK: Final = re.compile(r"\]\((file:[^)\s]+)\)")


def session_draft(sid: str, state: dict[str, Any], folder: str | None, title: str) -> Draft | None:
    """A session from its replayed state; None when it holds no request."""
    requests = [r for r in state.get("requests") or [] if isinstance(r, dict)]
    if not requests:
        return None
    draft = Draft(session_id=sid, cwd=_uri(state.get("workingDirectory")) or folder)
    draft.title = clean_text(state.get("customTitle") or title)
    draft.seen(parse_time(state.get("creationDate")))
    for request in requests:
        draft.seen(parse_time(request.get("timestamp")))
        draft.prompts.append(clean_text(_message(request.get("message"))))
        response = request.get("response")
        for part in response if isinstance(response, list) else []:
            draft.files += _part_files(part)
        draft.files += _round_files(request.get("result"))
    return draft


def _message(message: object) -> str:
    if isinstance(message, str):
        return message
    if not isinstance(message, dict):
        return ""
    if isinstance(message.get("text"), str):
        return str(message["text"])
    parts = message.get("parts")
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    return "".join(t for t in texts if isinstance(t, str))


def _part_files(part: object) -> list[str]:
    if not isinstance(part, dict):
        return []
    kind = part.get("kind")
    if kind in ("textEditGroup", "notebookEditGroup"):
        found = _uri(part.get("uri"))
        return [found] if found else []
    if kind == "toolInvocationSerialized" and part.get("toolId") in EDIT_TOOL_IDS:
        texts = []
        for key in ("pastTenseMessage", "invocationMessage"):
            value = part.get(key)
            texts.append(value.get("value") if isinstance(value, dict) else value)
        links = [m for t in texts if isinstance(t, str) for m in _LINK.findall(t)]
        return [p for p in (uri_path(link) for link in links) if p]
    return []


def _round_files(result: object) -> list[str]:
    metadata = result.get("metadata") if isinstance(result, dict) else None
    rounds = metadata.get("toolCallRounds") if isinstance(metadata, dict) else None
    files: list[str] = []
    for round_ in rounds if isinstance(rounds, list) else []:
        calls = round_.get("toolCalls") if isinstance(round_, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("name") in EDIT_TOOL_NAMES:
                files += _call_files(call.get("arguments"))
    return files


def _call_files(arguments: object) -> list[str]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return []
    if not isinstance(arguments, dict):
        return []
    if isinstance(arguments.get("input"), str) and "*** " in arguments["input"]:
        return patch_files(arguments["input"])
    found = path_argument(arguments)
    files = [found] if found else []
    replacements = arguments.get("replacements")
    for item in replacements if isinstance(replacements, list) else []:
        found = path_argument(item)
        if found:
            files.append(found)
    return files


def editing_files(state: object) -> list[str]:
    """The files an editing session (``chatEditingSessions/<id>/state.json``) changed."""
    if not isinstance(state, dict):
        return []
    files: list[str] = []
    snapshot = state.get("recentSnapshot")
    entries = snapshot.get("entries") if isinstance(snapshot, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            files.append(_uri(entry.get("resource")) or "")
    initial = state.get("initialFileContents")
    for pair in initial if isinstance(initial, list) else []:
        if isinstance(pair, list) and pair:
            files.append(_uri(pair[0]) or "")
    return [f for f in files if f]


def _uri(value: object) -> str | None:
    """A URI as VS Code serializes it: a string, or ``{fsPath, external, path, scheme}``."""
    if isinstance(value, dict):
        if isinstance(value.get("fsPath"), str):
            return safe_text(normalize_path(value["fsPath"]))
        if isinstance(value.get("external"), str):
            return uri_path(value["external"])
        if isinstance(value.get("path"), str) and value.get("scheme", "file") == "file":
            return uri_path("file://" + value["path"])
        return None
    return uri_path(value)
