"""The library's pre-push hook: a hand-typed ``git push`` never sends the working branch.

The working branch holds every private row and staged write; a bourdon remote (a git remote
with ``remote.<name>.bourdonVisibility``, see ``bourdon.replicate``) receives only the published
branch, which ``bourdon sync`` writes with private rows filtered out. bourdon's own git runs
with hooks disabled; this hook is for the git people type in the library (``git push --all
origin``). It refuses, for a bourdon remote, any ref but ``bourdon/published`` and any commit
whose history holds the working branch's first commit. A hook of your own can live beside it as
``pre-push.local``: it runs after the check, with the same arguments and input.

``Library.init`` and ``Library.open`` install it when it is missing or an older version of
ours; a ``pre-push`` of someone else's is never overwritten (``status`` says so).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

from bourdon.store.durable import atomic_write

PUBLISHED: Final = "bourdon/published"  # as bourdon.replicate.state.BRANCH
MARK: Final = "# bourdon push guard, version 1"

HOOK: Final = f"""#!/bin/sh
{MARK}: installed by bourdon, kept by 'bourdon doctor'.
# A bourdon remote receives only {PUBLISHED} (written by 'bourdon sync', private rows
# filtered out), never the working branch, which holds private rows and staged writes.
# A hook of your own can live beside this one as pre-push.local: it runs after the check.
remote="$1"
url="$2"
guarded=
if [ -n "$(git config --get "remote.$remote.bourdonVisibility")" ]; then
  guarded=yes
else
  for key in $(git config --name-only --get-regexp '^remote\\..*\\.bourdonvisibility$'); do
    name=${{key#remote.}}
    name=${{name%.bourdonvisibility}}
    [ "$(git config --get "remote.$name.url")" = "$url" ] && guarded=yes
  done
fi
input=$(cat)
if [ -n "$guarded" ]; then
  first=$(git rev-list --first-parent --max-parents=0 HEAD 2>/dev/null | tail -n 1)
  refused=$(printf '%s\\n' "$input" | while read -r lref loid rref roid; do
    [ -z "$lref" ] && continue
    case "$loid" in *[!0]*) sending=yes ;; *) sending= ;; esac
    if [ "$rref" != "refs/heads/{PUBLISHED}" ]; then
      echo "$lref -> $rref"
    elif [ -n "$sending" ] && [ -n "$first" ] &&
        git merge-base --is-ancestor "$first" "$loid" 2>/dev/null; then
      echo "$lref -> $rref (it holds the working branch)"
    fi
  done)
  if [ -n "$refused" ]; then
    echo "bourdon: refused to push to $remote, a bourdon remote:" >&2
    printf '%s\\n' "$refused" | sed 's/^/  /' >&2
    echo "bourdon: it receives only {PUBLISHED}, written by 'bourdon sync $remote' with private" >&2
    echo "bourdon: rows filtered out; the working branch holds private rows and staged writes." >&2
    exit 1
  fi
fi
own="$(dirname "$0")/pre-push.local"
if [ -x "$own" ]; then
  printf '%s\\n' "$input" | "$own" "$@"
  exit $?
fi
exit 0
"""


def hook_path(git_dir: Path) -> Path:
    return git_dir / "hooks" / "pre-push"


def state(git_dir: Path) -> str:
    """``installed`` (this version), ``missing``, ``older`` (ours, outdated) or ``foreign``."""
    try:
        text = hook_path(git_dir).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "foreign"
    if text == HOOK:
        return "installed" if hook_path(git_dir).stat().st_mode & 0o111 else "older"
    return "older" if "# bourdon push guard" in text else "foreign"


def ensure(git_dir: Path) -> str:
    """Install the hook unless someone else's is there; the state it is left in. Never raises
    (a library this user may read but not write is served all the same)."""
    found = state(git_dir)
    if found in ("missing", "older"):
        with contextlib.suppress(OSError):
            atomic_write(hook_path(git_dir), HOOK.encode("utf-8"), 0o755, keep_mode=False)
            hook_path(git_dir).chmod(0o755)
            return "installed"
    return found
