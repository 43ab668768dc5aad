"""bourdon's entry in a TOML or YAML configuration file, edited as text.

Python can read TOML (``tomllib``) and YAML, but writing either back would drop the user's
comments and layout. So bourdon's entry is one block of text: appended (TOML), inserted under
``extensions:`` (goose's YAML), or replaced where it stands; every other byte is left as it
was. Each edit is then checked by parsing the result: it must hold the same data as before
plus bourdon's entry, else the file is refused, unchanged.

Codex's table is ``[mcp_servers.<name>]`` with ``command`` and ``args``
[src openai/codex:docs/config.md]; goose's extensions are a mapping under ``extensions:``
[docs https://block.github.io/goose/docs/guides/config-files].
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import yaml

from bourdon.errors import InputError

# -- TOML (Codex) ---------------------------------------------------------------------------


def toml_table(raw: str, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{what} is not valid TOML ({exc}); bourdon changed nothing") from None


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _toml_block(name: str, entry: dict[str, Any]) -> str:
    lines = [f"[mcp_servers.{name}]"] + [f"{k} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _toml_span(lines: list[str], name: str) -> tuple[int, int] | None:
    """Lines [start, end) of ``[mcp_servers.<name>]`` and its sub-tables, if it is a table."""
    header = re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*(\"{name}\"|'{name}'|{name})\s*\]")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        return None
    end = start + 1
    sub = re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*(\"{name}\"|'{name}'|{name})\s*\.")
    while end < len(lines) and not (
        lines[end].lstrip().startswith("[") and not sub.match(lines[end])
    ):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # the blank lines before the next table are not ours
    return start, end


def toml_register(raw: str, name: str, entry: dict[str, Any], what: str) -> str:
    before = toml_table(raw, what)
    servers = before.get("mcp_servers", {})
    if servers.get(name) == entry:
        return raw
    lines = raw.splitlines(keepends=True)
    span = _toml_span(lines, name)
    block = _toml_block(name, entry)
    if span is not None:
        text = "".join(lines[: span[0]]) + block + "".join(lines[span[1] :])
    elif name in servers:
        raise InputError(
            f"{what} defines mcp_servers.{name} in a form bourdon does not edit; bourdon "
            f"changed nothing: make it a [mcp_servers.{name}] table, or edit it by hand"
        )
    else:
        sep = "" if not raw else "\n" if raw.endswith("\n") else "\n\n"
        text = raw + sep + block
    _check(toml_table(text, what), before, ("mcp_servers", name), entry, what)
    return text


def toml_unregister(raw: str, name: str, what: str) -> str:
    before = toml_table(raw, what)
    lines = raw.splitlines(keepends=True)
    span = _toml_span(lines, name)
    if span is None:
        return raw
    start, end = span
    if start > 0 and not lines[start - 1].strip() and end == len(lines):
        start -= 1  # the blank line register put before an appended table
    text = "".join(lines[:start] + lines[end:])
    _check(toml_table(text, what), before, ("mcp_servers", name), None, what)
    return text


# -- YAML (goose) ---------------------------------------------------------------------------


def yaml_mapping(raw: str, what: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        raise InputError(f"{what} is not valid YAML ({exc}); bourdon changed nothing") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{what} does not hold a YAML mapping; bourdon changed nothing")
    return data


_TOP = re.compile(r"^extensions:\s*(#.*)?$")


def _child_indent(lines: list[str], top: int) -> int:
    for line in lines[top + 1 :]:
        if line.strip() and not line.lstrip().startswith("#"):
            indent = len(line) - len(line.lstrip(" "))
            return indent if indent > 0 else 2
    return 2


def _yaml_span(lines: list[str], top: int, indent: int, name: str) -> tuple[int, int] | None:
    key = re.compile(rf"^ {{{indent}}}{re.escape(name)}:\s*(#.*)?$")
    for i in range(top + 1, len(lines)):
        line = lines[i]
        if line.strip() and (len(line) - len(line.lstrip(" "))) == 0:
            return None  # the next top-level key: extensions ended
        if key.match(line.rstrip("\n")):
            end = i + 1
            while end < len(lines) and (
                not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip(" ")) > indent
            ):
                end += 1
            return i, end
    return None


def _yaml_block(name: str, entry: dict[str, Any], indent: int) -> str:
    text = yaml.safe_dump(
        {name: entry}, sort_keys=False, default_flow_style=False, indent=max(2, indent)
    )
    return "".join(" " * indent + line + "\n" for line in text.splitlines())


def goose_register(raw: str, name: str, entry: dict[str, Any], what: str) -> str:
    before = yaml_mapping(raw, what)
    extensions = before.get("extensions")
    if isinstance(extensions, dict) and extensions.get(name) == entry:
        return raw
    lines = raw.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    top = next((i for i, line in enumerate(lines) if _TOP.match(line.rstrip("\n"))), None)
    if top is None:
        if "extensions" in before:
            raise InputError(
                f"{what} writes 'extensions' in a form bourdon does not edit; bourdon changed "
                "nothing: add bourdon's extension by hand"
            )
        text = "".join(lines) + "extensions:\n" + _yaml_block(name, entry, 2)
    else:
        indent = _child_indent(lines, top)
        span = _yaml_span(lines, top, indent, name)
        block = _yaml_block(name, entry, indent)
        if span is None:
            text = "".join(lines[: top + 1]) + block + "".join(lines[top + 1 :])
        else:
            text = "".join(lines[: span[0]]) + block + "".join(lines[span[1] :])
    _check(yaml_mapping(text, what), before, ("extensions", name), entry, what)
    return text


def goose_unregister(raw: str, name: str, what: str) -> str:
    before = yaml_mapping(raw, what)
    lines = raw.splitlines(keepends=True)
    top = next((i for i, line in enumerate(lines) if _TOP.match(line.rstrip("\n"))), None)
    if top is None:
        return raw
    span = _yaml_span(lines, top, _child_indent(lines, top), name)
    if span is None:
        return raw
    text = "".join(lines[: span[0]] + lines[span[1] :])
    after = yaml_mapping(text, what)
    if after.get("extensions") is None and isinstance(before.get("extensions"), dict):
        after["extensions"] = {}  # `extensions:` left with nothing under it reads as null
    _check(after, before, ("extensions", name), None, what)
    return text


# -- the check ------------------------------------------------------------------------------


def _check(
    after: dict[str, Any],
    before: dict[str, Any],
    where: tuple[str, str],
    entry: dict[str, Any] | None,
    what: str,
) -> None:
    """``after`` must be ``before`` with only bourdon's entry added (or, None, removed)."""
    expected = json.loads(json.dumps(before, default=str))
    holder = expected.setdefault(where[0], {})
    if entry is None:
        if isinstance(holder, dict):
            holder.pop(where[1], None)
    else:
        holder[where[1]] = entry
    got = json.loads(json.dumps(after, default=str))
    if entry is None and got.get(where[0]) in ({}, None) and expected.get(where[0]) == {}:
        got[where[0]] = expected[where[0]]
    if got != expected:
        raise InputError(
            f"bourdon could not edit {what} safely (its layout is unusual); bourdon changed "
            "nothing: add bourdon's server by hand"
        )
