"""The one private-path rule every reader applies to a session's folder or a note's file.

A folder named ``personal`` or ``private`` (any case) directly inside a home folder is private:
this machine's home, ``~``, ``/home/<user>``, ``/Users/<user>``, ``/root``,
``C:\\Users\\<user>`` (any drive, either slash) and WSL's ``/mnt/<drive>/Users/<user>``. Stores
copied from another machine keep their paths, so any user's home counts, not only this one.
Everything else is team: ``~/work/x``, ``/srv/personal-site``, ``~/personalities``.

Before issue 12 the Claude Code and Codex readers and the others each had a rule, and they
disagreed (``~/personal/x`` was team for the first two); this one is the stricter of both.

Verbatim prompts (sessions with key actions) and instruction-file notes that this rule leaves
team get ``ReaderContext.prompt_visibility`` instead (``ReaderContext.shared``).

Pure like every reader: reads nothing, writes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

PRIVATE_DIRS: Final = ("personal", "private")
_HOMES: Final = r"~|/home/[^/]+|/Users/[^/]+|/root|/mnt/[a-z]/Users/[^/]+|[a-z]:/Users/[^/]+"
_PRIVATE_TAIL: Final = rf"/(?:{'|'.join(PRIVATE_DIRS)})(?:/|$)"


def is_private_path(path: str | None, home: Path) -> bool:
    """Whether ``path`` lies in a ``personal`` or ``private`` folder of a home (see above)."""
    if not path:
        return False
    text = re.sub(r"/+", "/", path.replace("\\", "/"))
    mine = re.sub(r"/+", "/", str(home).replace("\\", "/")).rstrip("/")
    homes = f"{re.escape(mine)}|{_HOMES}" if mine else _HOMES
    return re.match(rf"^(?:{homes}){_PRIVATE_TAIL}", text, re.IGNORECASE) is not None


def visibility(path: str | None, home: Path) -> str:
    """``"private"`` for a path the rule marks private, else ``"team"``."""
    return "private" if is_private_path(path, home) else "team"
