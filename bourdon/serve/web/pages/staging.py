"""The staging review: quarantined writes waiting for the operator, each one's diff against the
live manifest, and Promote and Reject (the one place the web view writes).

Who sees what is what ``memory_status`` answers them: the operator and trusted members every
staged write, a quarantined member only its own. A staged write's rows are shown only to the
operator and to the member who staged it. Promote and Reject are the operator's alone, checked
here on every POST, not only by leaving the buttons out; they make the same library call as
``bourdon staging promote|reject`` (with the same redaction), so the commit names the operator
as caller and the member as stager.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from typing import Final

from starlette.responses import RedirectResponse, Response

from bourdon.access.redact import redacted
from bourdon.digest import digest8
from bourdon.errors import InputError
from bourdon.serve.caller import audience_of, scope_of
from bourdon.serve.web.app import Page
from bourdon.serve.web.filters import plural
from bourdon.serve.web.links import PREFIX, segment
from bourdon.serve.web.pages.history import (
    Diff,
    library_of,
    link,
    page_level,
    row_diff,
    row_limit,
)
from bourdon.serve.web.view import View
from bourdon.status import sections
from bourdon.store.library import Library
from bourdon.store.staging import StagedWrite, staged_caller

MAX_NOTICES: Final = 256


class Notices:
    """One notice per session, shown once on the next staging page (what a POST did)."""

    def __init__(self) -> None:
        self._notes: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, session_id: str, text: str) -> None:
        with self._lock:
            self._notes[session_id] = text
            while len(self._notes) > MAX_NOTICES:
                self._notes.popitem(last=False)

    def pop(self, session_id: str) -> str:
        with self._lock:
            return self._notes.pop(session_id, "")


NOTICES: Final = Notices()


def _may_review(view: View, stager: str) -> bool:
    """The operator reviews every staged write; a member only its own."""
    return view.is_operator or stager == view.caller.id


async def staging_list(view: View) -> Response:
    library = library_of(view)

    def work(caller, decision):  # type: ignore[no-untyped-def]
        # As memory_status shapes it for this caller: its own staged writes for a quarantined
        # member, every one for the operator and trusted members.
        return sections.staging(library.staged(), audience_of(caller), time.time()) or {}

    answer = await view.read("memory_status", None, work)
    writes = list(answer.get("writes") or [])
    for w in writes:
        if _may_review(view, w["caller"]):
            w["href"] = link(view, f"/staging/{segment(w['agent_id'])}", member=w["caller"])
    return view.render(
        "staging.html",
        active="staging",
        writes=writes,
        error=answer.get("error"),
        notice=NOTICES.pop(view.session.id),
        stale_days=answer.get("stale_after_days"),
    )


def _staged(library: Library, agent_id: str, member: str | None) -> StagedWrite:
    """The staged write of ``member`` (or the only one) for ``agent_id``."""
    staged = library.staged()
    try:
        who = staged_caller(staged, agent_id, member)
    except InputError:
        raise InputError(
            f"several members staged {agent_id!r}; open one from the staging page"
        ) from None
    return next(s for s in staged if s.agent_id == agent_id and s.caller == who)


async def staged_page(view: View) -> Response:
    library = library_of(view)
    agent_id = view.request.path_params["agent_id"]
    member = view.request.query_params.get("member") or None
    level = page_level(view)

    def work(caller, decision):  # type: ignore[no-untyped-def]
        # A member is looked up among its own writes only: whether another member staged
        # this agent is not its business, so that answers as if nothing were staged.
        staged = _staged(library, agent_id, member if view.is_operator else caller.id)
        live = library.current_digest(agent_id)
        keep_home = scope_of(caller).keep_home
        diff = _staged_diff(library, staged, live, level, keep_home, row_limit(view))
        return {"staged": staged, "diff": diff}

    # Under query_agent_memory's rule for the agent: the diff shows its live rows.
    answer = await view.read("query_agent_memory", agent_id, work)
    staged: StagedWrite = answer["staged"]
    base = f"{PREFIX}/staging/{segment(agent_id)}"
    return view.render(
        "staged.html",
        active="staging",
        staged=staged,
        digest8=digest8(staged.digest),
        diff=answer["diff"],
        promote_action=base + "/promote",
        reject_action=base + "/reject",
        back=link(view, "/staging"),
        all_href=link(view, f"/staging/{segment(agent_id)}", member=staged.caller, rows="all"),
    )


# A staged write and a live manifest, each named by its digest, never change: nor does
# what a reader at one level sees promotion make of them.
@functools.lru_cache(maxsize=64)
def _staged_diff(
    library: Library,
    staged: StagedWrite,
    live_digest: str | None,
    level: int,
    keep_home: bool,
    limit: int | None,
) -> Diff:
    live, promoted = library.promotion(staged.caller, staged.agent_id, clean=redacted)
    return row_diff(live, promoted, level, keep_home, limit)


async def _write(view: View, verb: str) -> Response:
    """Promote or reject, as ``bourdon staging promote|reject`` does; the operator's only."""
    if not view.is_operator:
        return view.web.error(view, 403, f"only the local operator may {verb} a staged write")
    library = library_of(view)
    agent_id = view.request.path_params["agent_id"]
    member = view.form.get("member") or None

    def work(caller, decision):  # type: ignore[no-untyped-def]
        staged = _staged(library, agent_id, member)
        if verb == "promote":
            result = library.promote(staged.caller, agent_id, clean=redacted)
            rows = plural(staged.rows, "row")
            commit = (result.version or "")[:8]  # promote always commits, changed rows or not
            return f"promoted {agent_id} from {staged.caller}: {rows}, commit {commit}"
        version = library.reject(staged.caller, agent_id)
        return f"rejected the staged write of {staged.caller} for {agent_id}, commit {version[:8]}"

    # Under commit_to_federation's rule: promotion is the live write the member asked for.
    answer = await view.read("commit_to_federation", agent_id, work, writes=True)
    NOTICES.put(view.session.id, answer)
    return view.web.secured(RedirectResponse(link(view, "/staging"), status_code=303))


async def promote(view: View) -> Response:
    return await _write(view, "promote")


async def reject(view: View) -> Response:
    return await _write(view, "reject")


PAGES: Final = [
    Page("/staging", staging_list),
    Page("/staging/{agent_id}", staged_page),
    Page("/staging/{agent_id}/promote", promote, methods=("POST",)),
    Page("/staging/{agent_id}/reject", reject, methods=("POST",)),
]
