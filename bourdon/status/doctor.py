"""What is wrong with a library, and the command that fixes it: a pure function of a report.

``diagnose(report)`` reads a report of ``bourdon.status.health`` (a plain dict) and returns its
problems, errors first. Each problem has a ``code`` (stable, for scripts), a ``severity``
(``error``: broken, unsafe or losing data; ``warning``: worth a look), a ``message`` saying what
was found, a ``fix``, one command to run (where only the user can decide, the command that shows
what to decide on), and the ``subject`` it is about (an agent, reader, peer, remote or file).

Commands name the library with ``--library`` / ``git -C`` so they act on the library the report
is about, whatever ``$BOURDON_LIBRARY`` says where they are run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from typing import Any, Final

from bourdon.model import SPEC_VERSION
from bourdon.status.repairs import git_checks, leftovers, unpacked_objects
from bourdon.status.verdicts import ERROR, WARNING, Problem, bourdon_command, problem


def diagnose(report: Mapping[str, Any]) -> list[Problem]:
    """Every problem the report shows, errors first (otherwise in the order found)."""
    lib = shlex.quote(str(report["library"])) if report.get("library") else "<library>"
    found: list[Problem] = []
    for check in CHECKS:
        found += check(report, lib)
    return sorted(found, key=lambda p: p["severity"] != ERROR)


def has_errors(problems: list[Problem]) -> bool:
    return any(p["severity"] == ERROR for p in problems)


_bourdon = bourdon_command

# -- the checks, each a function of (report, quoted library path) ------------------------


def library_missing(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    if report.get("exists") is False:
        yield problem(
            "no_library", ERROR, lib, f"{lib} is not a bourdon library", f"bourdon init {lib}"
        )


def invalid_manifests(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    checked = (report.get("checks") or {}).get("manifests")
    if checked is None:  # no deep check ran: the agents read at HEAD say enough
        agents = (report.get("agents") or {}).get("agents") or {}
        checked = [
            {"agent": a, "path": f"agents/{a}.l5.yaml", "where": "head", "problem": e["problem"]}
            for a, e in agents.items()
            if not e.get("valid", True)
        ] + list(report.get("hand_edits") or [])
    for bad in checked:
        path, agent = bad["path"], bad["agent"]
        if bad["where"] == "head":
            last = bad.get("last_valid")
            fix = (
                f"git -C {lib} checkout {last[:12]} -- {path} && "
                f"git -C {lib} commit -m 'restore {agent}' -- {path}"
                if last
                else _bourdon(lib, "validate")
            )
            yield problem(
                "manifest_invalid",
                ERROR,
                path,
                f"{path} at HEAD does not validate, so {agent} is not served: {bad['problem']}"
                + (f" (version {last[:12]} was the last valid one)" if last else ""),
                fix,
            )
        else:
            committed = bad.get("committed", True)
            yield problem(
                "hand_edit_invalid",
                ERROR,
                path,
                f"{path} was edited by hand and does not validate: {bad['problem']}; writes to "
                f"{agent} are refused until it is fixed"
                + ("" if committed else " (it was never committed: fix it or remove it)"),
                f"git -C {lib} checkout -- {path}" if committed else _bourdon(lib, "validate"),
            )
    for text in (report.get("index") or {}).get("skipped") or []:
        path = text.split(" ", 1)[0]
        yield problem(
            "manifest_skipped",
            ERROR,
            path,
            f"the server skips {text}; fix the file, or drop a hand edit with "
            f"git -C {lib} checkout -- {path}",
            _bourdon(lib, "validate"),
        )


def skipped_rows(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    """Rows a manifest holds that do not validate: kept in the file, left out of answers."""
    agents = (report.get("agents") or {}).get("agents") or {}
    for agent, facts in agents.items():
        for row in facts.get("skipped_rows") or ():
            yield problem(
                "row_skipped",
                WARNING,
                f"{row['path']}: {row['section'] or 'manifest'}"
                + (f"[{row['row']}]" if row["row"] is not None else ""),
                f"{row['message']}; that row is kept in the file but left out of every answer "
                f"(the rest of {agent} is served): correct it (or remove it) and commit the edit",
                f"${{EDITOR:-vi}} {lib}/{row['path']} && "
                f"git -C {lib} commit -m 'fix {agent}' -- {row['path']}",
            )


def index_behind(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    index = report.get("index") or {}
    if index.get("loaded") and index.get("matches_head") is False:
        yield problem(
            "index_behind",
            WARNING,
            "index",
            f"the server's index reflects {str(index.get('head'))[:12]} while HEAD is "
            f"{str(report.get('head'))[:12]}; it reloads on its next call",
            "restart bourdon serve if this persists",
        )


def unknown_versions(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    for version in report.get("schema_versions") or {}:
        if version != SPEC_VERSION:
            yield problem(
                "unknown_spec_version",
                WARNING,
                version,
                f"manifests with spec_version {version} (this bourdon writes {SPEC_VERSION}); "
                "they were written by another implementation or a newer bourdon",
                "python -m pip install --upgrade bourdon",
            )


def staging(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    found = report.get("staging") or {}
    if found.get("error"):
        yield problem(
            "staging_unreadable",
            ERROR,
            "staging",
            f"the staged writes cannot be listed: {found['error']}",
            _bourdon(lib, "validate"),
        )
    days = found.get("stale_after_days")
    for write in found.get("writes") or []:
        if not write.get("stale"):
            continue
        agent, caller = write["agent_id"], write["caller"]
        age = int(write["age_seconds"] // 86_400)
        yield problem(
            "stale_staged_write",
            WARNING,
            write["path"],
            f"{caller}'s write to {agent} ({write['rows']} row{'' if write['rows'] == 1 else 's'}) "
            "has waited in staging for "
            f"{age} days (more than {days}); look at it with "
            f"{_bourdon(lib, f'staging show {agent} --from {caller}')}, then promote it, or "
            f"drop it with {_bourdon(lib, f'staging reject {agent} --from {caller}')}",
            _bourdon(lib, f"staging promote {agent} --from {caller}"),
        )


def readers(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    for entry in report.get("readers") or []:
        name = entry["reader"]
        health = entry.get("health") or {}
        if entry.get("drifting"):
            drift = entry.get("drift") or {}
            if entry.get("present") is False:
                hint = f" ({health['fix']})" if health.get("fix") else ""
                yield problem(
                    "reader_drifting",
                    WARNING,
                    name,
                    f"{name} stopped yielding memory: {drift.get('reason')}; point the export "
                    f"at its store if it moved{hint}",
                    _bourdon(lib, f"export {name} --store PATH"),
                )
            else:
                yield problem(
                    "reader_drifting",
                    WARNING,
                    name,
                    f"{name} stopped yielding memory: {drift.get('reason')}; its store's format "
                    "may have changed. If the store really is empty now, accept it with "
                    + _bourdon(lib, f"export {name} --force"),
                    _bourdon(lib, f"export {name} --dry-run"),
                )
        elif (entry.get("erosion") or {}).get("refused"):
            yield problem(
                "export_refused",
                WARNING,
                name,
                f"the last export of {name} was refused by the erosion guard: "
                f"{entry.get('reason')}. If the loss is real, accept it with "
                + _bourdon(lib, f"export {name} --force"),
                _bourdon(lib, f"export {name} --dry-run"),
            )
        if entry.get("present") and not health.get("ok"):
            yield problem(
                "reader_unhealthy",
                WARNING,
                name,
                f"{name}: {health.get('message')}",
                health.get("fix") or "bourdon readers",
            )
        failure = entry.get("last_hook_failure")
        if failure and not entry.get("hook_failure_resolved"):
            yield problem(
                "hook_failed",
                WARNING,
                name,
                f"{name}'s hook failed at {failure.get('when')}: {failure.get('error')}; "
                "running the export by hand shows the error",
                _bourdon(lib, f"export {name}"),
            )
    for plugin in report.get("broken_readers") or []:
        module = str(plugin.get("target", "")).split(":")[0]
        yield problem(
            "reader_plugin_broken",
            WARNING,
            plugin["name"],
            f"the reader plugin {plugin['name']} ({plugin.get('target')}) does not load: "
            f"{plugin.get('error')}; reinstall the package that provides it",
            f"python -c 'import {module}'",
        )


def peers(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    found = report.get("peers") or {}
    if found.get("error"):
        yield problem(
            "peers_unreadable",
            ERROR,
            "peers.yaml",
            f"the peers file cannot be read: {found['error']}; fix or remove it",
            "bourdon peers list",
        )
    for peer in found.get("peers") or []:
        if peer.get("reachable") is False:
            name = peer["name"]
            yield problem(
                "peer_unreachable",
                WARNING,
                name,
                f"peer {name} at {peer.get('url')} did not answer: {peer.get('problem')}. "
                f"If its URL is wrong: bourdon peers add {name} URL; if its server is only "
                "down, start it there; if it is gone for good, remove it",
                f"bourdon peers remove {name}",
            )


def remotes(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    found = report.get("remotes") or {}
    if found.get("error"):
        yield problem(
            "remotes_unreadable",
            ERROR,
            "remotes",
            f"the library's remotes cannot be read: {found['error']}",
            f"git -C {lib} remote -v",
        )
    for remote in found.get("remotes") or []:
        name = remote["name"]
        if remote.get("last_error"):
            yield problem(
                "remote_sync_failed",
                ERROR,
                name,
                f"the last sync with {name} ({remote.get('url')}) failed at "
                f"{remote.get('last_error_at')}: {remote['last_error']}. Check that this "
                f"machine can reach it (git -C {lib} ls-remote {name}) and may push to it, "
                "then sync again",
                _bourdon(lib, f"sync {name}"),
            )
        elif remote.get("last_attempt") is None:
            yield problem(
                "remote_never_synced",
                WARNING,
                name,
                f"the remote {name} ({remote.get('url')}) has never been synced",
                _bourdon(lib, f"sync {name}"),
            )


def members(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    counts = report.get("members")
    if counts and counts.get("error"):
        yield problem(
            "members_unreadable",
            ERROR,
            "federation.yaml",
            f"the member registry cannot be read: {counts['error']}",
            "bourdon member list",
        )
    bind = (report.get("checks") or {}).get("bind")
    if bind and bind.get("loopback") is False and not (counts or {}).get("active"):
        host = bind["host"]
        yield problem(
            "exposed_without_auth",
            ERROR,
            host,
            f"serving on {host} would expose the library beyond this machine and no member "
            "can authenticate yet ('bourdon serve' refuses it); enrol a member, or serve on "
            "loopback: bourdon serve --transport http --host 127.0.0.1",
            "bourdon member add NAME",
        )


def registrations(report: Mapping[str, Any], lib: str) -> Iterator[Problem]:
    """The agents' MCP registrations that would not start bourdon (``status.registrations``)."""
    yield from (report.get("checks") or {}).get("registrations") or ()


CHECKS: Final = (
    library_missing,
    invalid_manifests,
    skipped_rows,
    index_behind,
    unknown_versions,
    staging,
    readers,
    peers,
    remotes,
    members,
    registrations,
    leftovers,
    git_checks,
    unpacked_objects,
)
