"""An agent's hook settings as JSON: read strictly, written back in the file's own style, and
the two shapes of hook lists (flat ``{"event": [{"command": ...}]}`` for Cursor, Cascade and
Copilot CLI, ``{"event": [{"hooks": [{"command": ...}]}]}`` for the others). A handler's command
is under ``Target.command_key`` (Copilot CLI's is ``bash``). Pure: no file is read or written
here.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from bourdon.errors import InputError
from bourdon.ingest.hookfiles import Target

OURS: Final = "bourdon hook "  # every command bourdon's hook files run starts with this
_PROGRAMS: Final = ("bourdon", "bourdon.exe")


def hook_call(command: object) -> tuple[str, ...] | None:
    """The ``hook ...`` words of a command bourdon installed (``bourdon hook export X``, or
    ``/abs/bourdon --library L hook export X``, or ``/abs/python -m bourdon ... hook ...``);
    None for anyone else's command. Installs of every bourdon version are recognised."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    program = words[0].replace("\\", "/").rsplit("/", 1)[-1]
    if program in _PROGRAMS:
        rest = words[1:]
    elif program.startswith("python") and words[1:3] == ["-m", "bourdon"]:
        rest = words[3:]
    else:
        return None
    while len(rest) >= 2 and rest[0] == "--library":
        rest = rest[2:]
    if len(rest) >= 2 and rest[0] == "hook":
        return tuple(rest)
    return None


def parse_settings(raw: str, path: Path) -> dict[str, Any]:
    """The settings text ``raw`` of the file at ``path`` as a dict: plain JSON only, else
    an ``InputError`` that says what to fix (and that nothing was changed)."""
    try:
        data = json.loads(raw, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise InputError(
            f"{path} repeats the key {exc.args[0]!r}; bourdon edits plain JSON only and changed "
            "nothing: remove the duplicate, or add bourdon's hooks by hand"
        ) from None
    except json.JSONDecodeError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})"
        raise InputError(
            f"{path} is not valid JSON{where}: comments and trailing commas are not JSON; "
            "bourdon changed nothing: fix the file, or add bourdon's hooks by hand"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object; bourdon changed nothing")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InputError(f"'hooks' in {path} is not an object; bourdon changed nothing")
    if isinstance(hooks, dict):
        for event, entries in hooks.items():
            if not isinstance(entries, list):
                raise InputError(
                    f"'hooks.{event}' in {path} is not a list; bourdon changed nothing"
                )
    return data


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def dump_settings(data: dict[str, Any], raw: str | None) -> str:
    """JSON in the style of the file it replaces: same indentation and final newline."""
    indent: int | str = 2
    if raw:
        for line in raw.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                indent = "\t" if lead.startswith("\t") else len(lead)
                break
    # A file that spells non-ASCII characters as \u escapes keeps doing so.
    escaped = raw is not None and raw.isascii() and "\\u" in raw
    text = json.dumps(data, indent=indent, ensure_ascii=escaped)
    return text + "\n" if raw is None or raw.endswith("\n") or not raw else text


def handlers_of(shipped: dict[str, Any], spec: Target) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, handler) of a hook file; a handler is a mapping with a command."""
    for event, groups in shipped["hooks"].items():
        for group in groups:
            handlers = [group] if spec.flat else group.get("hooks", [])
            for handler in handlers:
                yield event, handler


def group_of(shipped: dict[str, Any], event: str, handler: dict[str, Any]) -> dict[str, Any]:
    """The group of bourdon's hook file that holds ``handler``, with only that handler."""
    for group in shipped["hooks"][event]:
        if handler in group.get("hooks", []):
            return {**{k: v for k, v in group.items() if k != "hooks"}, "hooks": [handler]}
    return {"hooks": [handler]}


def _handlers(data: dict[str, Any], spec: Target, event: str) -> Iterator[dict[str, Any]]:
    hooks = data.get("hooks")
    entries = hooks.get(event) if isinstance(hooks, dict) else None
    for item in entries if isinstance(entries, list) else []:
        if not isinstance(item, dict):
            continue
        handlers = [item] if spec.flat else item.get("hooks")
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict):
                yield handler


def has_command(data: dict[str, Any], spec: Target, event: str, command: str) -> bool:
    return any(h.get(spec.command_key) == command for h in _handlers(data, spec, event))


def retired_in(data: dict[str, Any], spec: Target) -> list[str]:
    """The hooks an older bourdon installed on events this one no longer uses, still in
    ``data``, as "Event: command" (``Target.retired``)."""
    found = []
    for event, call in spec.retired:
        for handler in _handlers(data, spec, event):
            command = handler.get(spec.command_key)
            if hook_call(command) == call:
                found.append(f"{event}: {command}")
    return found


def same_call(
    data: dict[str, Any], spec: Target, event: str, command: str
) -> dict[str, Any] | None:
    """A handler of ``event`` that bourdon installed for the same hook call as ``command``
    (by another bourdon, or for another library): the one to upgrade."""
    wanted = hook_call(command)
    for handler in _handlers(data, spec, event):
        if wanted is not None and hook_call(handler.get(spec.command_key)) == wanted:
            return handler
    return None


def _ours(handler: object, commands: set[str], key: str) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get(key)
    return isinstance(command, str) and (command in commands or hook_call(command) is not None)


def strip_ours(
    item: object, spec: Target, commands: set[str], only: tuple[str, ...] | None = None
) -> tuple[object | None, list[str]]:
    """``item`` without bourdon's handlers (None when nothing of it is left), and what went.
    With ``only``, just the handlers whose hook call is ``only`` (a retired hook) go."""
    key = spec.command_key

    def ours(handler: object) -> bool:
        if only is None:
            return _ours(handler, commands, key)
        return isinstance(handler, dict) and hook_call(handler.get(key)) == only

    if spec.flat:
        if ours(item):
            assert isinstance(item, dict)
            return None, [str(item[key])]
        return item, []
    if not isinstance(item, dict) or not isinstance(item.get("hooks"), list):
        return item, []
    handlers = item["hooks"]
    gone = [str(h[key]) for h in handlers if ours(h)]
    if not gone:
        return item, []
    left = [h for h in handlers if not ours(h)]
    if not left:
        return None, gone
    return {**item, "hooks": left}, gone
