"""Who runs sessions for a long-lived client (the console): its own runner threads, or the workers.

Who runs them is one choice, `ANDOR_RUNNER` (`runners_for`), behind one interface (`Runners`), so
the console never asks which:

- `embedded` (the default): runs happen in runner threads owned by the console process
  (`RunnerPool`), never in a page's script run, so closing or reloading a page neither stops nor
  loses a run; every page reads the same store. When the console stops, each runner leaves its
  session paused (see `Runner._close`), so the next start can resume it.
- `workers`: the console is only a client of a shared database, and `python -m sessions worker`
  processes run the sessions (`WorkerClient`). A session created running, or sent a command, is
  runnable for them by that write alone (the store signals them on PostgreSQL), so the console
  starts nothing; stopping it stops no session.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Protocol

from sessions.errors import SessionsError
from sessions.store import EventStore

__all__ = ["RUNNER_MODES", "RunnerChoiceError", "RunnerPool", "Runners", "WorkerClient", "runners_for"]

_log = logging.getLogger(__name__)

RUNNER_MODES = ("embedded", "workers")
"""The values of `ANDOR_RUNNER`; unset or empty means the first."""


class RunnerChoiceError(SessionsError):
    """An `ANDOR_RUNNER` value that names no way of running sessions."""


class Runners(Protocol):
    """Who runs the sessions a front end starts or sends commands to."""

    def ensure_running(self, session_id: str) -> bool:
        """Make sure the session will be run (a queued command applied); True when a runner was started here."""
        ...

    def running(self, session_id: str) -> bool:
        """Whether a runner is in charge of the session, so there is none to restart."""
        ...

    def error(self, session_id: str) -> str | None:
        """Why the session's last runner here stopped unexpectedly, if it did."""
        ...

    def shutdown(self, timeout: float = 15.0) -> None:
        """Stop whatever runs in this process."""
        ...


class WorkerClient:
    """`Runners` when workers run every session: nothing runs here, so there is nothing to start or stop.

    A running session is always in the workers' hands, held by one or waiting for a free one (a
    dead worker's session is taken over once its lease is stale), so `running` is True for it: the
    console never offers to restart a runner, and its status line says which worker holds the lease.
    A runner's failure is the session's own reason in the store, not an error of this process."""

    def ensure_running(self, session_id: str) -> bool:
        """Nothing to start: the write that made the session runnable already told the workers."""
        return False

    def running(self, session_id: str) -> bool:
        return True

    def error(self, session_id: str) -> str | None:
        return None

    def shutdown(self, timeout: float = 15.0) -> None:
        """Nothing runs here; the workers' sessions go on."""


def runners_for(mode: str | None, store: EventStore, artifacts: Path | None = None) -> Runners:
    """The runners `mode` (an `ANDOR_RUNNER` value) names; raises `RunnerChoiceError` with one sentence
    for any other."""
    choice = (mode or "").strip().lower() or RUNNER_MODES[0]
    if choice == "embedded":
        return RunnerPool(store, artifacts)
    if choice == "workers":
        return WorkerClient()
    raise RunnerChoiceError(
        f"ANDOR_RUNNER={(mode or '')[:40]!r} is not a way of running sessions; use 'embedded' (runs in the console, "
        "the default) or 'workers' (python -m sessions worker processes run them)"
    )


class RunnerPool:
    """`Runners` in the console's process: one background thread per running session, all stopped
    together on shutdown."""

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
        """Whether a runner thread of this process runs the session."""
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
        from sessions.worker.runner import Runner  # the engine and its models, only where a session runs here

        try:
            Runner(self.store, session_id, artifacts=self.artifacts).run(should_stop=self._stopping.is_set)
        except Exception as error:  # noqa: BLE001 - a runner thread must report, never vanish silently
            _log.exception("runner for session %s stopped", session_id)
            self._errors[session_id] = f"{type(error).__name__}: {error}"
