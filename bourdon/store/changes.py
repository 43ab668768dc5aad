"""A caller's change: checked (its shape, its agent id, its agent type), then turned into the
new manifest by what each kind of write computes from the current one.

The write protocol (``writes``) calls a ``Compute`` under the library lock with the manifest
at HEAD (``None`` when the agent is new) and commits what it returns.

No write lowers a row's visibility (``merge.floor``) except the operator's explicit choice
(``lower=True``), which the commit records row by row (``Bourdon-Lowered``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from bourdon.digest import RowCache, digest, is_current, parse_digest
from bourdon.errors import ConflictError, InputError, NotFoundError
from bourdon.merge.floor import keep_floor, lowered
from bourdon.merge.threeway import Conflict, merge3
from bourdon.merge.twoway import MergeStats, RowChanges, RowKeys, compare, merge, regenerate
from bourdon.model import AGENT_TYPES, ROW_SECTIONS, Manifest
from bourdon.store.forgetting import FORGET_REQUEST, forget, names_of

# A write the reference staged carries its review notes under this key (``staging:``).
REFERENCE_STAGING_NOTES: Final = "staging"
# The new manifest and what changed, from the current one (``None``: the agent is new).
Compute = Callable[[dict[str, Any] | None], tuple[dict[str, Any], MergeStats]]


def check(agent_id: str, change: Mapping[str, Any]) -> None:
    """A change is a mapping in the manifest's shape naming no other agent than ``agent_id``."""
    if not isinstance(change, Mapping):
        raise InputError("a change must be a mapping in the manifest's shape")
    agent = change.get("agent")
    if agent is not None and not isinstance(agent, Mapping):
        raise InputError("'agent' must be a mapping with id and type")
    named = agent.get("id") if isinstance(agent, Mapping) else None
    if named is not None and named != agent_id:
        raise InputError(
            f"the change names agent {named!r} but is being committed to {agent_id!r}; "
            "commit it to its own agent or remove agent.id"
        )


def given_type(change: Mapping[str, Any]) -> bool:
    agent = change.get("agent")
    return isinstance(agent, Mapping) and bool(agent.get("type"))


def require_type(agent_id: str, change: Mapping[str, Any]) -> None:
    """A change that creates an agent must say what type of agent it is."""
    if not given_type(change):
        raise InputError(
            f"{agent_id!r} is a new agent: give agent.type, one of {', '.join(AGENT_TYPES)}"
        )


def with_id(change: Mapping[str, Any], agent_id: str) -> dict[str, Any]:
    """``change`` with ``agent.id`` set to ``agent_id``."""
    agent = change.get("agent")
    return {**change, "agent": {**(agent if isinstance(agent, Mapping) else {}), "id": agent_id}}


# -- what each write computes from the current manifest (``None``: the agent is new) -------


def merging(
    agent_id: str,
    change: Mapping[str, Any],
    mode: str,
    source: dict[str, str],
    lower: bool = False,
    extra: dict[str, str] | None = None,
) -> Compute:
    """``Library.commit``: merge (or replace) the change into the live manifest.

    A row keeps at least the visibility it had, unless ``lower``: then what was lowered is
    named in ``extra`` (the commit's ``Lowered`` trailers).
    """

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        if current is None:
            require_type(agent_id, change)
        result, stats = merge(current, with_id(change, agent_id), mode=mode, source=source)
        if not lower:
            return keep_floor(result, current), stats
        if extra is not None:
            extra.pop("Lowered", None)
            if names := lowered(current, result):
                extra["Lowered"] = "\n".join(names)
        return result, stats

    return compute


def regenerating(agent_id: str, fresh: Mapping[str, Any], source: dict[str, str]) -> Compute:
    """``Library.regenerate``: a reader's own rows replaced by its fresh view, others kept."""

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        if current is None:
            require_type(agent_id, fresh)
        keys = RowKeys()  # the merge, its counts, the floor and the reuse key the same rows
        result, stats = regenerate(current, with_id(fresh, agent_id), source, keys=keys)
        return _floor_and_reuse(result, current, keys), stats

    return compute


def _floor_and_reuse(
    result: dict[str, Any], current: dict[str, Any] | None, keys: RowKeys
) -> dict[str, Any]:
    """``_reuse_rows(keep_floor(result, current), current)``, looking at fewer rows.

    The floor would look at every row the regeneration rebuilt. Given back as current rows
    first, the unchanged ones are skipped by it (under the same policy a current row keeps
    its visibility); what it pins is offered for reuse again. The two orders agree when no
    two rows of a section share a key: a row identical to a current one has its visibility,
    so the floor leaves it alone. Otherwise, or under another policy, the order is kept."""
    reused = _reused_unique(result, current, keys)
    if reused is None:
        return _reuse_rows(keep_floor(result, current, keys=keys), current, keys)
    result.update(reused)
    result = keep_floor(result, current, keys=keys)
    if any(result[section] is not out for section, out in reused.items()):
        result = _reuse_rows(result, current, keys)
    return result


def _reused_unique(
    result: dict[str, Any], current: dict[str, Any] | None, keys: RowKeys
) -> dict[str, list[Any]] | None:
    """Each section of ``result`` with the rows that are exactly current ones given as those;
    ``None`` when the two orders may disagree (no current manifest, another policy, or two
    rows of a section sharing a key)."""
    if not current or Manifest(current).policy != Manifest(result).policy:
        return None
    reused = {}
    for section in ROW_SECTIONS:
        rows, before = result.get(section), current.get(section)
        if isinstance(rows, list) and isinstance(before, list) and before:
            out, unique = _reused(section, rows, before, keys)
            if not unique:
                return None
            reused[section] = out
    return reused


def _reuse_rows(
    result: dict[str, Any], current: Mapping[str, Any] | None, keys: RowKeys
) -> dict[str, Any]:
    """``result`` with each row that is exactly a current one (same values of the same types)
    given as the current row itself. A regeneration rebuilds every row of the reader; given
    back as the very objects, the unchanged ones are formatted, digested and validated from
    the write protocol's caches (kept by row identity), so a write costs what changed."""
    if not current:
        return result
    for section in ROW_SECTIONS:
        rows, before = result.get(section), current.get(section)
        if isinstance(rows, list) and isinstance(before, list) and before:
            result[section] = _reused(section, rows, before, keys)[0]
    return result


def _reused(
    section: str, rows: list[Any], before: list[Any], keys: RowKeys
) -> tuple[list[Any], bool]:
    """``rows`` with each row that is exactly one of ``before`` given as that row, and whether
    no two rows of ``rows``, nor of ``before``, share a key."""
    key = keys.of
    first: dict[tuple[str, ...], Mapping[str, Any]] = {}
    more: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}  # all rows of a key held twice
    for row in before:
        if type(row) is dict or isinstance(row, Mapping):  # the type first: the ABC check is slow
            k = key(section, row)
            if k in first:
                more.setdefault(k, [first[k]]).append(row)
            else:
                first[k] = row
    out = []
    seen: set[tuple[str, ...]] = set()
    given = 0
    for row in rows:
        if type(row) is dict or isinstance(row, Mapping):
            seen.add(k := key(section, row))
            given += 1
            if k in more:
                for old in more[k]:
                    if old is not row and _identical(old, row):
                        row = old
                        break
            elif (only := first.get(k)) is not None and only is not row and _identical(only, row):
                row = only
        out.append(row)
    return out, not more and len(seen) == given


def _identical(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same values of the same types: ``==`` alone takes ``1`` for ``True`` or ``1.0``,
    which are written differently. Rows of text only (a reader's) need no more than a look at
    their types; any other is compared by its JSON, which tells them apart."""
    if a != b:
        return False
    if _text_only(a.values()) and _text_only(b.values()):
        return True
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return False


def _text_only(values: Iterable[object]) -> bool:
    """Whether each value is a string, or a list or dict of such. Plain loops: this looks at
    every field of every row an export gives, and generators cost more than the look."""
    for value in values:
        kind = type(value)
        if kind is str:
            continue
        if kind is list:
            assert isinstance(value, list)
            for item in value:
                if type(item) is not str and not _text_only((item,)):
                    return False
        elif kind is dict:
            assert isinstance(value, dict)
            if not _text_only(value.values()):
                return False
        else:
            return False
    return True


def forgetting(
    names: set[str],
    counts: dict[str, int],
    level: int | None = None,
    start: dict[str, Any] | None = None,
) -> Compute:
    """``Library.forget``: the entity's rows and mentions gone; what went is put in ``counts``.

    ``start``: what to forget in when there is no current file (a staged forget starts from
    the live manifest)."""

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        current = current if current is not None else start
        if current is None:
            raise NotFoundError("the agent has no live manifest")
        result, found = forget(current, names, level)
        counts.clear()
        counts.update(found)
        return result, stats_of(compare(current, result))

    return compute


def importing(data: dict[str, Any], source: dict[str, str]) -> Compute:
    """``Library.import_manifest``: the whole manifest replaces the live one."""

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        return merge(current, data, mode="replace", source=source)

    return compute


def promoting(staged: dict[str, Any], forgotten: list[str] | None = None) -> Compute:
    """``Library.promote``: a staged write's rows merged in, keeping the ``source`` it has;
    ``forgotten``: the names a staged forget asked for, then removed from the result."""
    # A write the reference staged carries its review notes (taint) under 'staging:'; like
    # the reference, promotion leaves them out of the live manifest.
    staged = {k: v for k, v in staged.items() if k != REFERENCE_STAGING_NOTES}

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        result, stats = merge(current, staged, mode="merge")
        result = keep_floor(result, current)
        for name in forgotten or ():
            result, _ = forget(result, names_of(result, name))
        if forgotten:
            stats = stats_of(compare(current, result))
        return result, stats

    return compute


def asking_to_forget(compute: Compute, name: str) -> Compute:
    """A staged forget: the staged file also names what it asks to forget (``FORGET_REQUEST``)."""

    def asking(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        result, stats = compute(current)
        asked = [n for n in result.get(FORGET_REQUEST) or [] if isinstance(n, str)]
        return {**result, FORGET_REQUEST: sorted({*asked, name})}, stats

    return asking


def restoring(restored: dict[str, Any]) -> Compute:
    """``Library.rollback``: an earlier version, as it was."""

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        return restored, stats_of(compare(current, restored))

    return compute


def integrating(
    base: Mapping[str, Any] | None,
    theirs: Mapping[str, Any],
    extra: dict[str, str],
    row_json: RowCache,
    conflicts: list[Conflict],
) -> Compute:
    """``Library.integrate``: three-way merge with a remote's version; names both digests and
    every conflict in ``extra`` (the commit's trailers) and in ``conflicts``."""
    extra["Theirs-Digest"] = digest(theirs, row_json)

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        if current is None:
            return dict(theirs), stats_of(compare(None, theirs))
        extra["Ours-Digest"] = digest(current, row_json)
        conflicts.clear()
        merged = merge3(base, current, theirs, conflicts)
        extra.pop("Conflict", None)
        if conflicts:
            extra["Conflict"] = "\n".join(str(c) for c in conflicts)
        return merged, stats_of(compare(current, merged))

    return compute


def staging(
    agent_id: str,
    change: Mapping[str, Any],
    live_type: str | None,
    source: dict[str, str],
    expected: tuple[str, str | None] | None = None,
) -> Compute:
    """``Library.stage``: merged into the staged file; a new one takes the live agent's type.

    ``expected``: (``expected_digest``, the live manifest's digest). The change was computed
    from the staged file when there is one, else from the live manifest: the digest must be
    that one's, as for a live write.
    """
    wanted = parse_digest(expected[0], "expected_digest") if expected else None

    def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
        if expected is not None and wanted is not None:
            now = digest(current) if current is not None else expected[1]
            if not is_current(now, wanted):
                raise ConflictError(
                    f"{agent_id!r} changed since you read it: expected_digest {expected[0]} is "
                    f"stale; the current digest is {now}. Re-read and retry",
                    current_digest=now,
                )
        proposed = with_id(change, agent_id)
        if current is None and live_type and not given_type(change):
            proposed["agent"] = {**proposed["agent"], "type": live_type}
        elif current is None:
            require_type(agent_id, change)
        result, stats = merge(current, proposed, source=source)
        return keep_floor(result, current), stats

    return compute


def stats_of(changes: RowChanges) -> MergeStats:
    """A comparison's rows added, changed and removed, counted as a merge counts them."""
    stats = MergeStats()
    for section in ROW_SECTIONS:
        stats.added[section] = len(changes.added[section])
        stats.updated[section] = len(changes.changed[section])
        stats.removed[section] = len(changes.removed[section])
    return stats
