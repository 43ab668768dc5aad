"""Text from the stores made safe to show: prompts without harness wrappers, readable notes.

Pure like every reader: reads nothing, writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, TypeVar

from bourdon.readers.base import clean_text

T = TypeVar("T")

MAX_NOTE: Final = 4000
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")
_CONTROL_BLOCK: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
# Text a harness puts in a user record that the user did not type.
_WRAPPER: Final = re.compile(
    r"^\s*(<(command-name|command-message|command-args|local-command-stdout|local-command-stderr"
    r"|local-command-caveat|bash-input|bash-stdout|bash-stderr|task-notification"
    r"|user-memory-input)>|Caveat: The messages below were generated|\[Request interrupted)"
)
_REMINDER: Final = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def user_prompt(content: object) -> str:
    """The words a user typed, from a user record's text; ``""`` for harness-made text."""
    if not isinstance(content, str):
        return ""
    text = _REMINDER.sub(" ", content)
    if _WRAPPER.match(text):
        return ""
    return clean_text(text)


def clean_block(value: object, limit: int = MAX_NOTE) -> str:
    """Multi-line text kept readable: ANSI and control characters gone, line breaks kept.

    Tabs become four spaces and trailing spaces go (the Claude Code and Codex notes).
    """
    if not isinstance(value, str):
        return ""
    text = _ANSI.sub("", value).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_BLOCK.sub(" ", text.replace("\t", "    "))
    lines = [line.rstrip() for line in text.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def note_text(text: str) -> str:
    """Memory-file text kept readable and within the note limit.

    Unlike ``clean_block`` tabs and inner spacing stay as written (the other readers' notes;
    their goldens depend on it).
    """
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _CONTROL_BLOCK.sub(" ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1].rstrip() + "…"


def control_free(value: str) -> str:
    """``value`` with control characters and lone surrogates shown as U+FFFD (a garbled cwd)."""
    return _CONTROL_BLOCK.sub("\ufffd", value)


def unique(items: Iterable[T]) -> list[T]:
    """Items in first-seen order, without repeats or empty values."""
    seen: set[Any] = set()
    out = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out
