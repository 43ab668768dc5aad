"""Watch the library's ``agents/`` folder so edits that are not commits reach the index too."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bourdon.query.index import Index


def watch_agents(index: Index) -> Callable[[], None]:
    """Rebuild ``index`` in the background on any change in its ``agents/``; returns a stopper."""
    try:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:  # pragma: no cover - watchdog is a dependency; stay useful without it
        return lambda: None

    # A file opened or read changes nothing, and the index's own reads would wake it again.
    quiet = {"opened", "closed_no_write"}

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type not in quiet:
                index.mark_dirty()

    if not index.agents_dir.is_dir():
        return lambda: None
    observer = Observer()
    observer.schedule(Handler(), str(index.agents_dir), recursive=False)
    observer.daemon = True
    observer.start()

    def stop() -> None:
        observer.stop()
        observer.join(timeout=2)

    return stop
