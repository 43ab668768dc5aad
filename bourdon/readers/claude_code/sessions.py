"""The parts of every transcript file combined into sessions (``Scan``), and the checkpoint that
lets a resumed read combine only the newest sessions again.

Sessions are combined oldest first: a prompt or edit copied into several files (a fork) belongs
to the oldest session holding it, so what the oldest sessions come to does not depend on the
newer ones. A ``Checkpoint`` keeps what the sessions before a boundary came to (their ids, the
record keys they claimed, the ancestors they copied from that had no transcript) and the legacy
summaries of the store with the session each titles. A read that finds none of their files
changed, no session older than the boundary, and no summary that came, went or found another
session, combines only the sessions after it, and gives the sessions a whole read gives.
Otherwise (``Scan.sessions_after`` answers ``None``) the caller combines them all.

Pure like every reader: no writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import ReadStats
from bourdon.readers.claude_code.quiet import Quiet, quiet_files, quiet_mains
from bourdon.readers.claude_code.transcripts import GarbledPart, Item, Part, SavedPart, short_uuid
from bourdon.readers.common.facts import SessionFacts

# The newest sessions a checkpoint leaves after it: the ones a user is likely to add to.
TAIL: Final = 64

Age = tuple[bool, float, str]


@dataclass
class Checkpoint:
    """What the sessions older than ``boundary`` came to (see the module docstring)."""

    boundary: Age  # the age of the newest of them
    sessions: list[str]  # their ids, oldest first
    claimed: list[str]  # the record keys their prompts and edits claimed
    orphans: list[str]  # sessions they inherited lines from that had no transcript
    summaries: list[list[str]]  # every summary, in reading order: [leaf (short), text, owner]

    def to_json(self) -> dict[str, Any]:
        return {
            "boundary": list(self.boundary),
            "sessions": self.sessions,
            "claimed": " ".join(self.claimed),  # short hex keys: one string parses far faster
            "orphans": self.orphans,
            "summaries": self.summaries,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        """Raises ``ValueError``/``TypeError``/``KeyError`` when garbled."""
        late, stamp, sid = data["boundary"]
        return cls(
            (bool(late), float(stamp), str(sid)),
            [str(s) for s in data["sessions"]],
            str(data["claimed"]).split(),
            [str(s) for s in data["orphans"]],
            [[str(leaf), str(text), str(owner)] for leaf, text, owner in data["summaries"]],
        )


@dataclass
class Sessions:
    """``Scan.sessions``'s answer: sessions oldest first, the first ``prefix`` of them before
    ``checkpoint`` (when one was taken; ``sessions_after``'s holds only those after it)."""

    facts: list[SessionFacts]
    prefix: int = 0
    checkpoint: Checkpoint | None = None


@dataclass
class _Transcript:
    """One session's transcript, with its prompts and edits keyed by record uuid."""

    facts: SessionFacts
    custom_title: str | None = None
    ai_title: str | None = None
    prompts: list[Item] = field(default_factory=list)
    edits: list[Item] = field(default_factory=list)
    main: bool = False  # a top-level transcript was read (not only subagent files)
    inherited_start: datetime | None = None  # first time of inherited lines, a fallback


class Scan:
    """The files' parts combined in reading order; resolves forks and legacy summaries."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self.dirs: list[tuple[Path, str | None]] = []  # (memory folder, a cwd of that project)
        self.folders: list[Path] = []  # every project folder, in reading order
        # (project folder, part, file) in reading order; a quiet file's part is None until
        # something needs it (``_materialize``)
        self._parts: list[tuple[Path, Part | SavedPart | None, str]] = []
        self._moved: list[Part] = []  # the parts of files that changed since the state was saved
        self._mains: set[str] | None = None  # sessions with a top-level transcript
        self._quiet: Quiet | None = None  # what the quiet files add to the tally
        self._quiet_mains: set[str] = set()  # their sessions with a top-level transcript
        self._quiet_at: dict[str, int] = {}  # each quiet file's place in ``_parts``
        self._saved: Callable[[str], SavedPart] | None = None  # a quiet file's saved part

    def add(self, folder: Path, part: Part | SavedPart, key: str, *, moved: bool = True) -> None:
        """A part of the transcript ``key`` in the project folder ``folder`` (one of
        ``folders``); ``moved``: its file changed since the state it may come from was saved."""
        self._parts.append((folder, part, key))
        if moved:
            self._moved.append(part.full())

    def add_quiet(self, folder: Path, key: str) -> None:
        """The transcript ``key``, one of the checkpoint's quiet files, as it was then."""
        self._quiet_at[key] = len(self._parts)
        self._parts.append((folder, None, key))

    def settle(
        self, quiet: Quiet | None, sessions: set[str], saved: Callable[[str], SavedPart]
    ) -> None:
        """After the last ``add``: the tally of the quiet files is ``quiet``'s (the quiet files
        of a checkpoint before ``sessions``) when every one of them was added as it was;
        ``saved`` gives a quiet file's part when one is needed."""
        self._saved = saved
        if quiet is not None and len(self._quiet_at) == quiet.files:
            self._quiet, self._quiet_mains = quiet, quiet_mains(quiet, sessions)
        else:
            self._materialize()

    def quiet(self, sessions: Iterable[str], marks: dict[str, Any]) -> Quiet:
        """The quiet files of a checkpoint before ``sessions`` (see ``quiet.quiet_files``)."""
        self._materialize()
        return quiet_files(self._parts, set(sessions), marks)

    def _materialize(self) -> None:
        """Every quiet file's saved part in its place (their tally, once taken, stays)."""
        if self._quiet_at:
            assert self._saved is not None, "settle() comes before a quiet part is needed"
            for key, at in self._quiet_at.items():
                folder = self._parts[at][0]
                self._parts[at] = (folder, self._saved(key), key)
            self._quiet_at = {}
        if self._mains is None:
            self._quiet = None

    def memory_dirs(self, root: Path) -> list[tuple[Path, str | None]]:
        """The auto-memory folders found under ``root``, each with a cwd of its project."""
        self._tally()
        return [(d, cwd) for d, cwd in self.dirs if root in d.parents]

    def _tally(self) -> set[str]:
        """Once per read, from the parts' headers alone (the quiet files' from ``_quiet``):
        the counts and unknown kinds (into the stats), the memory folders and the sessions
        with a top-level transcript."""
        if self._mains is not None:
            return self._mains
        quiet = self._quiet or Quiet()
        first: dict[str, int] = {}  # unknown kind -> the place of the first part holding it
        cwds: dict[str, tuple[int, str]] = {}  # folder -> (place, cwd) of its first main part
        counts = list(quiet.counts)  # records, skipped, too large: added to the stats once
        mains = set(self._quiet_mains) if self._quiet is not None else set()
        for at, (folder, part, _) in enumerate(self._parts):
            if part is None:
                continue  # a quiet file: in ``quiet``
            records, skipped, too_large = part.counts
            counts[0] += records
            counts[1] += skipped
            counts[2] += too_large
            for what in part.unknown:
                first.setdefault(what, at)
            if part.main:
                if part.sid:
                    mains.add(part.sid)
                if part.folder_cwd is not None and str(folder) not in cwds:
                    cwds[str(folder)] = (at, part.folder_cwd)
        for what, key in quiet.unknown.items():
            first[what] = min(first.get(what, len(self._parts)), self._quiet_at[key])
        for folder_name, (key, cwd) in quiet.cwds.items():
            at = self._quiet_at[key]
            if at < cwds.get(folder_name, (at + 1, ""))[0]:
                cwds[folder_name] = (at, cwd)
        for what in sorted(first, key=first.__getitem__):
            self.stats.problem(f"claude-code: skipped unknown {what}")
        self.stats.records += counts[0]
        self.stats.skipped += counts[1]
        self.stats.too_large += counts[2]
        for folder in self.folders:
            if (folder / "memory").is_dir():
                place = cwds.get(str(folder))
                self.dirs.append((folder / "memory", place[1] if place else None))
        self._mains = mains
        return mains

    def sessions(self, hot: Iterable[str] = ()) -> Sessions:
        """Each session's facts, oldest first; a prompt or edit copied into several files is
        counted once.

        A line a fork inherited (its ``sessionId`` names another session whose transcript was
        read) belongs to that session; any other record seen in several files belongs to the
        oldest session holding it. A subagent file gives its session a date and cwd only when
        the session has no top-level transcript.

        With a checkpoint before about the ``TAIL`` newest sessions (``_boundary``; ``hot``:
        the sessions whose files changed since the last read).
        """
        mains = self._tally()
        hot = set(hot)
        self._materialize()
        SavedPart.parse_all([p for _, p, _ in self._parts if isinstance(p, SavedPart)])
        by_id, summaries = self._gather(mains, set())
        titles: list[list[str]] = []
        if summaries:
            owner = self._owners({short_uuid(leaf) for leaf, _ in summaries})
            for leaf, text in summaries:
                short = short_uuid(leaf)
                titles.append([short, text, owner.get(short, "")])
        _title(by_id, titles)
        ordered = _oldest_first(by_id)
        cut = _boundary(ordered, set(hot), TAIL)
        claimed: set[str] = set()
        orphans: set[str] = set()
        out = _combine(ordered[:cut], claimed, mains, orphans)
        point = None
        if cut:
            point = Checkpoint(
                _age(ordered[cut - 1].facts),
                [t.facts.session_id for t in ordered[:cut]],
                sorted(claimed),
                sorted(orphans),
                titles,
            )
        prefix = len(out)
        out += _combine(ordered[cut:], claimed, mains, set())
        return Sessions(out, prefix, point)

    def sessions_after(self, point: Checkpoint, hot: Iterable[str]) -> Sessions | None:
        """The facts of the sessions after ``point`` only, oldest first, as ``sessions`` gives
        them; ``None`` when the point does not hold (see the module docstring). ``hot``: the
        sessions whose files were read again or added."""
        mains = self._tally()
        before = set(point.sessions)
        if before.intersection(hot) or mains & set(point.orphans) or self._retitled(point):
            return None
        by_id, _ = self._gather(mains, before)
        if len(by_id) > 2 * TAIL:
            return None  # a whole combination moves the checkpoint on
        _title(by_id, point.summaries)
        ordered = _oldest_first(by_id)
        if ordered and _age(ordered[0].facts) <= point.boundary:
            return None  # a session older than the boundary appeared
        return Sessions(_combine(ordered, set(point.claimed), mains, set()))

    def _retitled(self, point: Checkpoint) -> bool:
        """Whether a part read this time holds or held a summary, or holds a record a summary
        names (it may now be the first to hold it): the summaries may title other sessions."""
        leaves = {leaf for leaf, _, _ in point.summaries}
        for part in self._moved:
            if part.summarised or part.summaries or not leaves.isdisjoint(part.uuids):
                return True
        return False

    def _gather(
        self, mains: set[str], skip: set[str]
    ) -> tuple[dict[str, _Transcript], list[tuple[str, str]]]:
        """The parts of every session but those in ``skip``, combined per session."""
        by_id: dict[str, _Transcript] = {}
        summaries: list[tuple[str, str]] = []
        for _, saved, _ in self._parts:
            if saved is None:
                continue  # a quiet file: its session is one of ``skip``
            sid = saved.sid
            if sid is None or sid in skip:
                continue
            part = saved.full()
            t = by_id.get(sid)
            if t is None:
                t = by_id[sid] = _Transcript(SessionFacts(sid))
            t.main = t.main or part.main
            facts = t.facts
            if part.main or sid not in mains:
                if facts.start is None and part.start:
                    facts.start = datetime.fromisoformat(part.start)
                for cwd in part.cwds:
                    facts.see_cwd(cwd)
            if t.inherited_start is None and part.inherited_start:
                t.inherited_start = datetime.fromisoformat(part.inherited_start)
            t.custom_title = part.custom_title or t.custom_title
            t.ai_title = part.ai_title or t.ai_title
            if part.summaries:
                summaries.extend(part.summaries)
            if part.prompts:
                t.prompts.extend(part.prompts)
            if part.edits:
                t.edits.extend(part.edits)
        for t in by_id.values():
            if t.facts.start is None:
                t.facts.start = t.inherited_start
        return by_id, summaries

    def _owners(self, leaves: set[str]) -> dict[str, str]:
        """The session of the first part holding each of ``leaves`` (record uuids, short)."""
        owner: dict[str, str] = {}
        if len(leaves) > 8:  # many: one pass over every uuid
            for _, part, _ in self._parts:
                if part is None:
                    continue  # never: the caller made every part whole first
                for uuid in part.full().all_uuids():
                    owner.setdefault(uuid, part.sid or "")
            return owner
        # A few (the usual case): looked for in each part's saved uuids as they are. Each is
        # 12 hex digits between spaces, so a match of 12 of them is a whole uuid.
        wanted = set(leaves)
        for _, saved, _ in self._parts:
            if not wanted:
                break
            if saved is None:
                continue  # never: the caller made every part whole first
            part = saved.full()
            for uuid in [u for u in wanted if u in part.saved_uuids or u in part.uuids]:
                owner[uuid] = part.sid or ""
                wanted.discard(uuid)
        return owner


def _title(by_id: dict[str, _Transcript], titles: list[list[str]]) -> None:
    """Each legacy summary titles the session holding its leaf, unless one already has."""
    for _, text, owner in titles:
        found = by_id.get(owner)
        if found is not None and found.ai_title is None:
            found.ai_title = text


def _oldest_first(by_id: dict[str, _Transcript]) -> list[_Transcript]:
    return sorted(by_id.values(), key=lambda t: _age(t.facts))


def _boundary(ordered: list[_Transcript], hot: set[str], tail: int) -> int:
    """How many of the oldest sessions a checkpoint can be taken after: all but the ``tail``
    newest, and none without a date (they sort last, and may be empty: no session at all).
    A ``hot`` session a little older than those is left after it too: it is likely to change
    again. One much older (an old session resumed) means no checkpoint (0): it would not hold
    while that session is worked in, and taking it at every read costs more than it saves."""
    cut = len(ordered) - tail
    for n, t in enumerate(ordered[: max(cut, 0)]):
        if t.facts.start is None:
            return n
        if t.facts.session_id in hot:
            return n if n >= cut - tail else 0
    return max(cut, 0)


def _combine(
    ordered: list[_Transcript], claimed: set[str], mains: set[str], orphans: set[str]
) -> list[SessionFacts]:
    """The sessions' facts, oldest first, each keeping what no older one claimed."""
    out = []
    for t in ordered:
        facts = t.facts
        empty = not (facts.cwds or t.prompts or t.edits or t.custom_title or t.ai_title)
        if facts.start is None and empty:
            continue  # an empty file: no session
        facts.titles = [x for x in (t.custom_title or t.ai_title,) if x]
        facts.prompts = _unclaimed(t.prompts, claimed, mains, orphans)
        facts.edits = _unclaimed(t.edits, claimed, mains, orphans)
        out.append(facts)
    return out


def _age(facts: SessionFacts) -> Age:
    """Oldest first, sessions without a timestamp last."""
    start = facts.start
    return (start is None, start.timestamp() if start else 0.0, facts.session_id)


def _unclaimed(
    items: list[Item], claimed: set[str], mains: set[str], orphans: set[str]
) -> list[str]:
    """The values of ``items`` no older session claimed; the ancestors named by the inherited
    ones kept (their transcript is not there) go to ``orphans``."""
    out = []
    try:
        for key, value, inherited in items:
            if inherited is not None:
                if inherited in mains:
                    continue  # the ancestor's own transcript holds it
                orphans.add(inherited)
            if key is not None:
                if key in claimed:
                    continue
                claimed.add(key)
            if type(value) is not str:
                raise TypeError("a saved item's value is not a string")
            out.append(value)
    except (TypeError, ValueError) as exc:  # a saved item that is not [key, value, inherited]
        raise GarbledPart(str(exc)) from exc
    return out
