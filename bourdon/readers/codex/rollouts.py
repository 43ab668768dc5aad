"""Codex rollout files (``sessions/**/rollout-*.jsonl``) read into session facts.

Line and payload shapes are in the package docstring (``bourdon.readers.codex``). Only reads.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    ReadStats,
    clean_text,
    iter_jsonl,
    parse_time,
)
from bourdon.readers.common.facts import SessionFacts
from bourdon.readers.common.paths import absolute_path, remembered_path
from bourdon.readers.common.text import user_prompt
from bourdon.readers.common.tools import patch_files

KNOWN_TYPES: Final = frozenset(
    "session_meta turn_context response_item event_msg compacted world_state "
    "inter_agent_communication inter_agent_communication_metadata".split()
)
KNOWN_ITEMS: Final = frozenset(
    "message reasoning function_call function_call_output custom_tool_call "
    "custom_tool_call_output local_shell_call web_search_call image_generation_call "
    "tool_search_call tool_search_output compaction context_compaction ghost_snapshot other "
    "mcp_tool_call".split()
)
KNOWN_EVENTS: Final = frozenset(
    "user_message agent_message agent_reasoning agent_reasoning_raw_content "
    "agent_reasoning_section_break token_count task_started task_complete turn_started "
    "turn_complete turn_aborted patch_apply_begin patch_apply_end context_compacted "
    "thread_rolled_back mcp_tool_call_begin mcp_tool_call_end web_search_begin web_search_end "
    "item_started item_completed exec_command_begin exec_command_end exec_command_output_delta "
    "error warning stream_error thread_name_updated plan_update entered_review_mode "
    "exited_review_mode view_image_tool_call background_event session_configured "
    "turn_diff get_history_entry_response shutdown_complete".split()
)
_INJECTED = re.compile(
    r"^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions|<turn_aborted>"
    r"|<user_shell_command>|<INSTRUCTIONS>)"
)
_ROLLOUT_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


@dataclass
class Rollout:
    """One rollout file as read: the session facts and what resolving forks needs."""

    facts: SessionFacts
    path: Path
    prompts: list[str] = field(default_factory=list)
    fallback_prompts: list[str] = field(default_factory=list)  # response_item user messages
    edits: list[tuple[str, str]] = field(default_factory=list)  # (call id, absolute path)
    names: list[str] = field(default_factory=list)  # thread_name_updated
    parent: str | None = None  # a subagent's parent thread
    forked_from: str | None = None
    seen_meta: bool = False


def read_rollout(path: Path, stats: ReadStats) -> Rollout | None:
    """One rollout file; ``None`` when it holds no line at all."""
    match = _ROLLOUT_ID.search(path.stem)
    r = Rollout(SessionFacts(match.group(1) if match else path.stem), path)
    facts = r.facts
    count = 0
    for record in iter_jsonl(path, stats):
        count += 1
        kind = _kind(record.get("type"))
        payload = record.get("payload")
        if kind not in KNOWN_TYPES or not isinstance(payload, dict):
            _unknown(stats, f"line type {kind!r}")
            continue
        when = record.get("timestamp")
        if facts.start is None and when is not None:
            facts.start = parse_time(when)
        if kind == "session_meta":
            _meta(r, payload)
        elif kind == "turn_context":
            cwd = remembered_path(payload.get("cwd"))
            if cwd:
                facts.see_cwd(cwd)
                facts.cwd = cwd  # the latest turn's cwd wins
        elif kind == "event_msg":
            _event(r, payload, stats)
        elif kind == "response_item":
            _item(r, payload, stats)
    if count == 0:
        return None
    return r


def _meta(r: Rollout, payload: dict[str, Any]) -> None:
    if r.seen_meta:
        return  # a resume appends another session_meta; the first is canonical
    r.seen_meta = True
    facts = r.facts
    if isinstance(payload.get("id"), str) and payload["id"]:
        facts.session_id = payload["id"]
    if facts.start is None:
        facts.start = parse_time(payload.get("timestamp"))
    cwd = remembered_path(payload.get("cwd"))
    facts.see_cwd(cwd)
    git = payload.get("git")
    url = git.get("repository_url") if isinstance(git, dict) else None
    if cwd and isinstance(url, str) and url:
        facts.remotes[cwd] = url
    r.forked_from = text_or_none(payload.get("forked_from_id"))
    source = payload.get("source")
    if isinstance(source, dict):
        r.parent = _find_key(source, "parent_thread_id")


def _event(r: Rollout, payload: dict[str, Any], stats: ReadStats) -> None:
    kind = _kind(payload.get("type"))
    if kind == "user_message":
        if payload.get("kind") in ("environment_context", "user_instructions"):
            return
        text = prompt(payload.get("message"))
        if text:
            r.prompts.append(text)
    elif kind == "thread_name_updated":
        name = clean_text(payload.get("thread_name"))
        if name:
            r.names.append(name)
    elif kind == "patch_apply_end":
        changes = payload.get("changes")
        if payload.get("success") is False or not isinstance(changes, dict):
            return
        call = str(payload.get("call_id") or "")
        for path, change in changes.items():
            targets = [path]
            if isinstance(change, dict) and isinstance(change.get("move_path"), str):
                targets.append(change["move_path"])
            for target in targets:
                absolute = _resolve(target, r.facts.cwd)
                if absolute:
                    r.edits.append((f"{call}:{absolute}", absolute))
    elif kind not in KNOWN_EVENTS:
        _unknown(stats, f"event {kind!r}")


def _item(r: Rollout, payload: dict[str, Any], stats: ReadStats) -> None:
    kind = _kind(payload.get("type"))
    if kind == "message":
        if payload.get("role") != "user" or not isinstance(payload.get("content"), list):
            return
        texts = [
            b.get("text")
            for b in payload["content"]
            if isinstance(b, dict) and b.get("type") in ("input_text", "text")
        ]
        text = prompt("\n".join(t for t in texts if isinstance(t, str)))
        if text:
            r.fallback_prompts.append(text)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call = str(payload.get("call_id") or payload.get("id") or "")
        for body in _strings(payload.get("arguments"), payload.get("input"), payload.get("action")):
            if "*** Begin Patch" not in body:
                continue
            for path in patch_files(body):
                absolute = _resolve(path, r.facts.cwd)
                if absolute:
                    r.edits.append((f"{call}:{absolute}", absolute))
    elif kind not in KNOWN_ITEMS:
        _unknown(stats, f"response item {kind!r}")


def _strings(*values: object) -> Iterator[str]:
    """Every string inside the values; a string holding JSON is opened too."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
            if value[:1] in ("[", "{"):
                with contextlib.suppress(ValueError, RecursionError):
                    stack.append(json.loads(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def prompt(value: object) -> str:
    """The user's words in a message; ``""`` for injected context or harness text."""
    if not isinstance(value, str) or _INJECTED.match(value):
        return ""
    return user_prompt(value)


def _resolve(path: str, cwd: str | None) -> str | None:
    text = remembered_path(path)
    return absolute_path(text, cwd) if text else None


def _find_key(value: object, key: str) -> str | None:
    """The first non-empty string under ``key`` anywhere inside ``value`` (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            found = item.get(key)
            if isinstance(found, str) and found:
                return found
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _kind(value: object) -> str | None:
    return value if isinstance(value, str) else None


def text_or_none(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def _unknown(stats: ReadStats, what: str) -> None:
    stats.skipped += 1
    text = f"codex: skipped unknown {what}"
    if text not in stats.problems:
        stats.problem(text)
