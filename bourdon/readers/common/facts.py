"""From session facts and memory files to the rows of a manifest view, for the Claude Code and
Codex readers: a project is named by its git repository, so every worktree and clone of it is
one project; memory files become entities and notes (``common.memory``).

The other readers use ``common.assembly``, whose projects are named by their folder: its rows
(summaries, file entities) are worded differently, and both are pinned by golden manifests.

Pure like every reader: reads files, never writes, no git, no network.

Size: over 400 lines because the assembly's checkpoint (``Assembler.checkpoint``/``resumed``)
saves and restores every field the assembly keeps; apart, a field added to one module would be
missed by the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bourdon.model import fold
from bourdon.readers.base import ReaderContext, ReadStats, clean_text, local_date
from bourdon.readers.common.gitconfig import GitInfo, git_info, repo_name
from bourdon.readers.common.memory import memory_rows
from bourdon.readers.common.paths import last_part, relative_path, remembered_path
from bourdon.readers.common.privacy import is_private_path
from bourdon.readers.common.text import control_free

MAX_SESSIONS: Final = 500
MAX_ENTITIES: Final = 1000
MAX_NOTES: Final = 1000
MAX_MEMORY_FILE: Final = 1024 * 1024


@dataclass
class SessionFacts:
    """What a reader learned about one session, before it becomes a manifest row."""

    session_id: str
    start: datetime | None = None
    cwd: str | None = None
    cwds: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)  # absolute paths where known
    remotes: dict[str, str] = field(default_factory=dict)  # cwd -> git remote URL

    def see_cwd(self, value: object) -> None:
        """Record a working directory; the first one seen is the session's."""
        cwd = remembered_path(value)
        if cwd and cwd not in self.cwds:
            self.cwds.append(cwd)
        if cwd and self.cwd is None:
            self.cwd = cwd


@dataclass
class _Project:
    name: str
    aliases: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    sessions: int = 0
    last: str = ""
    private: bool = False


@dataclass
class _File:
    project: str
    rel: str
    sessions: set[str] = field(default_factory=set)
    last: str = ""
    private: bool = False
    earlier: int = 0  # sessions counted before a checkpoint (none of them in ``sessions``)

    def count(self) -> int:
        return self.earlier + len(self.sessions)


class Assembler:
    """Turns ``SessionFacts`` and memory files into the manifest's rows, deterministically."""

    def __init__(self, ctx: ReaderContext) -> None:
        self.ctx = ctx
        # [start, id, row, facts, private]: a row is finished (prompts, files) only when the
        # cap keeps it (``manifest``), most of a large store's sessions are left out; then its
        # facts are dropped (``None``), as are those of a row restored from a checkpoint.
        self.sessions: list[list[Any]] = []
        self.projects: dict[str, _Project] = {}
        self.files: dict[tuple[str, str], _File] = {}
        self.entities: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._cwds: list[str] = []
        self._seen_memory: set[str] = set()
        self._git: dict[str, GitInfo] = {}
        self._names: dict[tuple[str, str | None], str] = {}
        # The same few files come back in thousands of sessions: each is placed once.
        self._shown: dict[tuple[str, str | None], str] = {}
        self._placed: dict[tuple[str, tuple[str, ...], str], _File | None] = {}
        self._private: dict[str | None, bool] = {}
        # The keys of the rows a checkpoint's cap left out (``resumed``): they sort below
        # every row it kept, so they can never be shown again; they are only counted.
        self._beyond: set[tuple[str, str, str]] = set()
        self._found = 0  # rows, those left out included, as ``_ordered`` last counted them

    def git(self, cwd: str) -> GitInfo:
        """The repository around ``cwd``, looked up once per folder."""
        found = self._git.get(cwd)
        if found is None:
            found = self._git[cwd] = git_info(cwd, self.ctx.home)
        return found

    # projects ---------------------------------------------------------------------------

    def project_of(self, cwd: str | None, remote: str | None = None) -> str | None:
        """The project a cwd belongs to: one name for every worktree and clone of a repo."""
        if not cwd:
            return None
        known = self._names.get((cwd, remote))
        if known is not None:
            return known or None
        self._names[(cwd, remote)] = name = self._project_of(cwd, remote) or ""
        return name or None

    def _project_of(self, cwd: str, remote: str | None) -> str | None:
        info = self.git(cwd)
        folders = [p.name for p in (info.toplevel, info.main) if p is not None]
        name = repo_name(remote or info.remote)
        name = name or (info.main.name if info.main else None) or last_part(cwd)
        if not name:
            return None
        name = clean_text(name, 128)
        key = fold(name)
        project = self.projects.get(key)
        if project is None:
            project = self.projects[key] = _Project(name)
        for alias in [*folders, last_part(cwd) if info.main is None else None]:
            if alias and fold(alias) != key and alias not in project.aliases:
                project.aliases.append(clean_text(alias, 128))
        return project.name

    def cwds(self) -> list[str]:
        """Every working directory of the sessions added so far, in order."""
        return list(self._cwds)

    # sessions ---------------------------------------------------------------------------

    def add_session(self, facts: SessionFacts) -> None:
        """One session row, and its share of the project and file entities."""
        date = local_date(facts.start, self.ctx.tz)
        private = self._private.get(facts.cwd)
        if private is None:
            private = self._private[facts.cwd] = is_private_path(facts.cwd, self.ctx.home)
        focus: list[str] = []
        for cwd in facts.cwds:
            if cwd not in self._cwds:
                self._cwds.append(cwd)
            name = self.project_of(cwd, facts.remotes.get(cwd))
            if name is None:
                continue
            project = self.projects[fold(name)]
            if cwd not in project.folders:
                project.folders.append(cwd)
            if name not in focus:
                focus.append(name)
                project.sessions += 1
                project.last = max(project.last, date)
                project.private = project.private or private
        for title in facts.titles:
            if title not in focus:
                focus.append(title)
        cwds = tuple(dict.fromkeys(c for c in (facts.cwd, *facts.cwds) if c))
        remotes = "\0".join(facts.remotes.get(c, "") for c in cwds) if facts.remotes else ""
        counted = facts.session_id or f"{date}|{facts.cwd}"
        # A file edited again in the same session adds nothing: each is counted once.
        for path in dict.fromkeys(facts.edits):
            self._file(path, facts, counted, date, private, (cwds, remotes))
        row: dict[str, Any] = {"date": date}
        if facts.session_id:
            row["session_id"] = clean_text(facts.session_id, 128)
        if facts.cwd:
            row["cwd"] = control_free(facts.cwd)[:512]
        if focus:
            row["project_focus"] = focus[:16]
        self.sessions.append([facts.start, facts.session_id, row, facts, private])

    def _finish(self, row: dict[str, Any], facts: SessionFacts, private: bool) -> None:
        """A session row's prompts, files touched and visibility (for the rows kept)."""
        touched: list[str] = []
        shown_set: set[str] = set()
        for path in dict.fromkeys(facts.edits):
            shown = self._shown.get((path, facts.cwd))
            if shown is None:
                shown = clean_text(relative_path(path, facts.cwd) or path, 1024)
                self._shown[(path, facts.cwd)] = shown
            if shown and shown not in shown_set:
                shown_set.add(shown)
                touched.append(shown)
        actions = key_actions(facts.titles, facts.prompts)
        if actions:
            row["key_actions"] = actions
        if touched:
            row["files_touched"] = touched[:50]
        row["visibility"] = self.ctx.shared(private, prompts=bool(actions))

    def _file(
        self,
        path: str,
        facts: SessionFacts,
        counted: str,
        date: str,
        private: bool,
        where: tuple[tuple[str, ...], str],
    ) -> None:
        """Count an edited file for its project, relative to the repository (or the cwd)."""
        cwds, remotes = where  # the session's cwds, and their remotes
        key = (path, cwds, remotes)
        if key in self._placed:
            entry = self._placed[key]
        else:
            placed = self._place(path, cwds, facts)
            entry = None
            if placed is not None:
                project, rel = placed
                entry = self.files.get((fold(project), rel))
                if entry is None:
                    entry = self.files[(fold(project), rel)] = _File(project, rel)
            self._placed[key] = entry
        if entry is None:
            return
        entry.sessions.add(counted)
        if date > entry.last:
            entry.last = date
        entry.private = entry.private or private

    def _place(
        self, path: str, cwds: tuple[str, ...], facts: SessionFacts
    ) -> tuple[str, str] | None:
        """(project, path in it) of an edited file: under the first cwd's repository or cwd."""
        for cwd in cwds:
            top = self.git(cwd).toplevel
            rel = (relative_path(path, str(top)) if top else None) or relative_path(path, cwd)
            if rel is not None:
                project = self.project_of(cwd, facts.remotes.get(cwd))
                return (project, rel) if project is not None else None
        return None

    # memory files -----------------------------------------------------------------------

    def add_memory(
        self,
        path: Path,
        kind: str,
        project: str | None,
        cwd: str | None,
        *,
        private: bool = False,
        related: Iterable[str] = (),
    ) -> None:
        """A memory file's entities and notes, private when its project or folder is."""
        try:
            key = str(path.resolve())
            if key in self._seen_memory or not path.is_file():
                return
            self._seen_memory.add(key)
            info = path.stat()
            if info.st_size > MAX_MEMORY_FILE:
                self.problems.append(f"{path.name}: skipped, {info.st_size:,} bytes is too large")
                return
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError as exc:
            self.problems.append(f"{path.name}: {exc.strerror}")
            return
        date = local_date(datetime.fromtimestamp(info.st_mtime, UTC), self.ctx.tz)
        if project is not None:
            owner = self.projects.get(fold(project))
            private = private or (owner is not None and owner.private)
        private = private or is_private_path(cwd, self.ctx.home)
        names = [project] if project else []
        names += [n for n in related if n and n not in names]
        entities, notes = memory_rows(
            text, kind, date, private, names, notes_private=self.ctx.shared(False) == "private"
        )
        self.entities.extend(entities)
        self.notes.extend(notes)

    # result -----------------------------------------------------------------------------

    def manifest(
        self, agent: str, agent_type: str, stats: ReadStats | None = None
    ) -> dict[str, Any]:
        """The view: sessions newest first and unique, entities, notes, within limits.

        ``stats`` learns how many sessions were found and kept (``MAX_SESSIONS``)."""
        sessions = self._ordered()
        entities = _unique_entities([*self._project_rows(), *self._file_rows(), *self.entities])
        if stats is not None:
            stats.found_sessions = self._found
            stats.sessions = min(self._found, MAX_SESSIONS)
        notes: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for note in self.notes:
            if (note["date"], note["text"]) not in seen:
                seen.add((note["date"], note["text"]))
                notes.append(note)
        return {
            "agent": {"id": agent, "type": agent_type},
            "known_entities": entities[:MAX_ENTITIES],
            "recent_sessions": sessions[:MAX_SESSIONS],
            "notes": notes[:MAX_NOTES],
        }

    def _ordered(self) -> list[dict[str, Any]]:
        """The session rows newest first and unique, the first ``MAX_SESSIONS`` finished."""
        ordered = sorted(
            self.sessions,
            key=lambda s: (s[0] is None, -(s[0].timestamp()) if s[0] else 0.0, s[1], s[2]["date"]),
        )
        sessions: list[dict[str, Any]] = []
        keys: set[tuple[str, str, str]] = set()
        for entry in ordered:
            row = entry[2]
            key = _row_key(row)
            if key not in keys:
                keys.add(key)
                if entry[3] is not None and len(sessions) < MAX_SESSIONS:
                    self._finish(row, entry[3], entry[4])
                    entry[3] = None
                sessions.append(row)
        # A row left out by a checkpoint's cap that a row here repeats is counted once.
        self._found = len(sessions) + len(self._beyond - keys)
        return sessions

    # checkpoints ------------------------------------------------------------------------

    def checkpoint(self) -> dict[str, Any] | None:
        """What the sessions added so far came to, as JSON values, for ``resumed``; ``None``
        when one of them has no id of its own, or one like the ids of sessions known only by
        date and folder (``date|cwd``): a file's sessions are kept as a count.

        The newest ``MAX_SESSIONS`` rows are finished first: sessions added later can only push
        them down, so no other row of these can be kept by the cap of a later view. Those are
        kept as their keys alone (``beyond``), only to be counted: each sorts below every row
        the cap kept, so a row sorting below one of them sorts below all those too, and is
        left out as well."""
        if any(not s[1] or "|" in s[1] for s in self.sessions):
            return None
        self._ordered()
        beyond = {_row_key(s[2]) for s in self.sessions if s[3] is not None} | self._beyond
        return {
            "sessions": [
                [s[0].isoformat() if s[0] else None, s[1], s[2], s[4]]
                for s in self.sessions
                if s[3] is None
            ],
            "beyond": sorted(beyond),
            "projects": [
                [key, p.name, p.aliases, p.folders, p.sessions, p.last, p.private]
                for key, p in self.projects.items()
            ],
            "files": [
                [key[0], key[1], f.project, f.count(), f.last, f.private]
                for key, f in self.files.items()
            ],
            "cwds": self._cwds,
            "git": {cwd: _git_json(info) for cwd, info in self._git.items()},
        }

    @classmethod
    def resumed(cls, ctx: ReaderContext, saved: dict[str, Any]) -> Assembler | None:
        """An assembler holding the sessions of ``checkpoint``'s, as if added again; ``None``
        when a repository they were placed in moved on (the sessions must be added again) or
        ``saved`` is garbled."""
        rows = cls(ctx)
        try:
            for cwd, then in saved["git"].items():
                if _git_json(rows.git(cwd)) != then:
                    return None
            for start, sid, row, private in saved["sessions"]:
                when = datetime.fromisoformat(start) if start else None
                if type(row) is not dict:  # parsed from the saved JSON: a row of its own
                    raise TypeError("a saved session row is not a mapping")
                rows.sessions.append([when, str(sid), row, None, bool(private)])
            rows._beyond = {(str(d), str(c), str(i)) for d, c, i in saved["beyond"]}
            for key, name, aliases, folders, count, last, private in saved["projects"]:
                rows.projects[str(key)] = _Project(
                    str(name), list(aliases), list(folders), int(count), str(last), bool(private)
                )
            for key, rel, project, count, last, private in saved["files"]:
                rows.files[(str(key), str(rel))] = _File(
                    str(project), str(rel), set(), str(last), bool(private), int(count)
                )
            rows._cwds = [str(c) for c in saved["cwds"]]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return rows

    def _project_rows(self) -> list[dict[str, Any]]:
        rows = []
        projects = sorted(self.projects.values(), key=lambda p: p.name)
        projects.sort(key=lambda p: p.last, reverse=True)  # newest first, undated last
        for p in projects:
            if not p.sessions:
                continue
            row: dict[str, Any] = {"name": p.name, "type": "project"}
            if p.aliases:
                row["aliases"] = p.aliases[:16]
            shown = ", ".join(p.folders[:5]) + (", ..." if len(p.folders) > 5 else "")
            row["summary"] = clean_text(
                f"Worked on in {p.sessions} session{'s' if p.sessions != 1 else ''}; "
                f"folders: {shown}.",
                2000,
            )
            if p.last:
                row["last_touched"] = p.last
            row["visibility"] = "private" if p.private else "team"
            rows.append(row)
        return rows

    def _file_rows(self) -> list[dict[str, Any]]:
        often = [f for f in self.files.values() if f.count() >= 2]
        clash: dict[str, int] = {}
        for f in often:
            clash[fold(f.rel)] = clash.get(fold(f.rel), 0) + 1
        rows = []
        for f in sorted(often, key=lambda f: (-f.count(), f.project, f.rel)):
            name = f.rel if clash[fold(f.rel)] == 1 else f"{f.project}/{f.rel}"
            if len(name) > 128:
                continue
            row: dict[str, Any] = {
                "name": name,
                "type": "file",
                "summary": f"Edited in {f.count()} sessions of {f.project}.",
            }
            if f.last:
                row["last_touched"] = f.last
            row["visibility"] = "private" if f.private else "team"
            rows.append(row)
        return rows[:200]


def _row_key(row: dict[str, Any]) -> tuple[str, str, str]:
    """What tells two session rows apart: one of each key is kept."""
    return (row["date"], row.get("cwd", ""), row.get("session_id", ""))


def _git_json(info: GitInfo) -> list[str | None]:
    return [str(p) if p else None for p in (info.toplevel, info.main)] + [info.remote]


def _unique_entities(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for row in rows:
        key = fold(row["name"])
        if key and key not in seen:
            seen.add(key)
            out.append(row)
    return out


def key_actions(titles: list[str], prompts: list[str]) -> list[str]:
    """Titles, the first prompt and the latest prompts: at most 10, each one line <= 256."""
    items: list[str] = []
    for text in [*titles, *prompts]:
        text = clean_text(text)
        if text and text not in items:
            items.append(text)
    if len(items) <= 10:
        return items
    head = [t for t in titles if t in items][:2]
    rest = [t for t in items if t not in head]
    return [*head, rest[0], *rest[len(rest) - (9 - len(head)) :]]
