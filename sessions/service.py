"""What a long-lived front end (the console) needs from sessions: background runners and snapshots.

Runs happen in runner threads owned by the console process, never in a page's script run, so
closing or reloading a page neither stops nor loses a run; every page reads the same store. When
the console stops, each runner leaves its session paused (see `Runner._close`), so the next start
can resume it.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from pathlib import Path

from planner.state import SessionState, replay
from sessions.runner import Runner
from sessions.store import EventStore

__all__ = ["RunnerPool", "TimeTravel"]

_log = logging.getLogger(__name__)


class RunnerPool:
    """One background thread per running session, all stopped together on shutdown."""

    def __init__(self, store: EventStore, artifacts: Path | None = None) -> None:
        self.store = store
        self.artifacts = artifacts
        self._threads: dict[str, threading.Thread] = {}
        self._errors: dict[str, str] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    def ensure_running(self, session_id: str) -> bool:
        """Start a runner for the session unless one is alive here; True when one was started."""
        with self._lock:
            thread = self._threads.get(session_id)
            if thread is not None and thread.is_alive() or self._stopping.is_set():
                return False
            self._errors.pop(session_id, None)
            thread = threading.Thread(target=self._run, args=(session_id,), name=f"runner-{session_id}", daemon=True)
            self._threads[session_id] = thread
            thread.start()
            return True

    def running(self, session_id: str) -> bool:
        thread = self._threads.get(session_id)
        return thread is not None and thread.is_alive()

    def error(self, session_id: str) -> str | None:
        """Why the last runner of this session stopped unexpectedly, if it did."""
        return self._errors.get(session_id)

    def shutdown(self, timeout: float = 15.0) -> None:
        """Ask every runner to stop at its next step boundary and wait for them to pause their sessions."""
        self._stopping.set()
        for thread in list(self._threads.values()):
            thread.join(timeout)

    def _run(self, session_id: str) -> None:
        try:
            Runner(self.store, session_id, artifacts=self.artifacts).run(should_stop=self._stopping.is_set)
        except Exception as error:  # noqa: BLE001 - a runner thread must report, never vanish silently
            _log.exception("runner for session %s stopped", session_id)
            self._errors[session_id] = f"{type(error).__name__}: {error}"


class TimeTravel:
    """States at past events, for the read-only timeline; rebuilt from the log and kept in a small LRU."""

    def __init__(self, store: EventStore, size: int = 8) -> None:
        self.store = store
        self.size = size
        self._cache: OrderedDict[tuple[str, int], SessionState] = OrderedDict()

    def at(self, session_id: str, seq: int) -> SessionState:
        key = (session_id, seq)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        state = replay(self.store.load(session_id, upto=seq))
        self._cache[key] = state
        if len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return state
