"""Doctor's verdicts on the library's git side: what interrupted writes left, what crash
recovery repaired, git's index, ``git fsck``, the identity hand commits use, and loose objects
that packing leaves behind.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bourdon.status.verdicts import ERROR, WARNING, Problem, problem
from bourdon.status.verdicts import bourdon_command as _bourdon
from bourdon.store.recovery import INDEX_REPAIRED


def leftovers(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    for left in report.get("leftovers") or []:
        path = left["path"]
        if left["kind"] == "write_pid":
            yield problem(
                "stale_write_pid",
                WARNING,
                path,
                f"{path} names process {left.get('pid')}, which is gone; the write lock itself "
                "was released with it, so only the file is left",
                f"rm {lib}/{path}",
            )
        elif left["kind"] == "git_lock_held":
            pids = ", ".join(str(p) for p in left.get("pids") or [])
            yield problem(
                "git_lock_in_use",
                WARNING,
                path,
                f"{path} is held by a git process still running in the library (pid {pids}), "
                "a git commit waiting for its editor perhaps; bourdon leaves it alone: finish "
                "or stop that command",
                f"ps -o pid,args -p {pids.replace(', ', ',')}",
            )
        elif left["kind"] == "git_lock_unknown":
            yield problem(
                "git_lock_unknown",
                WARNING,
                path,
                f"{path} is old, and bourdon cannot tell whether a git process still holds it "
                "(another user's git, or no /proc), so it leaves it alone; if no git command is "
                "running in the library, remove it",
                f"rm {lib}/{path}",
            )
        else:
            what = "an interrupted write" if left["kind"] == "intent" else "a killed git process"
            yield problem(
                "interrupted_write",
                ERROR,
                path,
                f"{path} was left by {what}; opening the library (any bourdon command) "
                "repairs it, keeping any uncommitted file in .bourdon/recovered/",
                _bourdon(lib, "agents"),
            )
    for sentence in report.get("recovered") or []:
        if sentence.startswith(INDEX_REPAIRED):
            yield problem(
                "git_index_repaired",
                WARNING,
                ".git/index",
                f"git's index was behind HEAD, so a plain git commit in the library would have "
                f"deleted or undone those files; opening the library {sentence}",
                f"git -C {lib} status",
            )
            continue
        yield problem(
            "recovered_write",
            WARNING,
            "recovered",
            f"an interrupted write was repaired: {sentence}; commit what you still want of "
            "it with bourdon commit AGENT --file FILE",
            f"ls {lib}/.bourdon/recovered/",
        )


def unpacked_objects(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    """Far more loose objects than packing lets pile up, and no run under way: runs fail."""
    store = report.get("objects") or {}
    limit = store.get("loose_limit") or 0
    if limit and not store.get("packing") and (store.get("loose_estimate") or 0) > 4 * limit:
        yield problem(
            "objects_unpacked",
            WARNING,
            ".git/objects",
            f"about {store['loose_estimate']} loose objects, over four times the {limit} at "
            "which bourdon packs them in the background: the background runs fail (their "
            "words are in .git/bourdon-pack.log); the library works, only slower and larger",
            f"git -C {lib} repack -d --geometric=2",
        )


def git_checks(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    checks = report.get("checks") or {}
    fsck = checks.get("fsck")
    if fsck and not fsck.get("clean"):
        said = " ".join(str(fsck.get("output") or "").split())[:300]
        yield problem(
            "fsck",
            ERROR,
            ".git",
            f"git fsck finds the repository damaged: {said}; restore the objects from a "
            "remote or a backup",
            f"git -C {lib} fsck --full --strict",
        )
    index = checks.get("git_index")
    if index and index.get("behind"):
        paths = index["behind"]
        yield problem(
            "git_index_behind",
            ERROR,
            ".git/index",
            f"git's index differs from HEAD for {len(paths)} "
            f"path{'' if len(paths) == 1 else 's'} ({', '.join(paths[:3])}): "
            "a plain git commit in the library would undo them; a git process held the index "
            "when bourdon tried to repair it",
            f"git -C {lib} read-tree HEAD",
        )
    guard = (checks.get("push_guard") or {}).get("state")
    if guard and guard != "installed":
        hooks = f"{lib}/.git/hooks"
        yield problem(
            "push_guard_missing",
            WARNING,
            ".git/hooks/pre-push",
            "the library's pre-push hook is not bourdon's"
            + (" (another pre-push is there)" if guard == "foreign" else "")
            + ", so a hand-typed git push to a bourdon remote could send the working branch "
            "with every private row; keep your hook as pre-push.local (bourdon's runs it) and "
            "run doctor again to install bourdon's",
            f"mv {hooks}/pre-push {hooks}/pre-push.local && {_bourdon(lib, 'doctor')}",
        )
    identity = checks.get("git_identity")
    if identity and not identity.get("ok"):
        yield problem(
            "git_identity_missing",
            WARNING,
            "git",
            "git has no user name and email for commits made by hand in the library (bourdon's "
            "own commits do not need them)",
            f"git -C {lib} config user.name 'Your Name' && "
            f"git -C {lib} config user.email you@example.com",
        )
