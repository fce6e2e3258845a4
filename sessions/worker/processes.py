"""Workers: processes that run whichever sessions need a runner, on one machine or many.

A worker takes sessions with the store's `claim_runnable`, which takes each session's lease by the
same compare-and-set as `claim`, so the single-runner guarantee and its fencing are those every
runner has. Each session runs in a thread of its own through `Runner`. A session that pauses for a
person is left at once with its lease released, so no browser is held while someone decides; the
command that continues it makes it runnable again, for any worker. One exception: a session that
has typed into a form on the page it waits on keeps its worker, since what was typed lives only in
that page (docs/architecture.md, "sessions/worker/processes.py").
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from planner.actions import ActionSyntaxError, Select, Type, parse_action
from planner.events import ActionExecuted, Cause, Event, Kind
from planner.state import Recorder, RunStatus, SessionState
from sessions.store import STALE_AFTER, EventStore, StoreError
from sessions.store.artifacts import ArtifactStore, artifact_store
from sessions.store.reading import load_state
from sessions.worker.runner import Runner

if TYPE_CHECKING:
    from planner.browser.server import BrowserEndpoint

__all__ = ["Worker"]

_log = logging.getLogger(__name__)


def _typed_on_page(events: list[Event]) -> bool:
    """Whether the page the log ends on holds input a reload would lose: a successful `type` or
    `select` since the page last changed its URL."""
    typed, url = False, None
    for event in events:
        page_url = getattr(event.payload, "url", None)
        if page_url is None:
            continue
        navigated, url = page_url != url, page_url
        if navigated:
            typed = False
        if isinstance(event.payload, ActionExecuted) and event.payload.ok and not navigated:
            try:
                typed = typed or isinstance(parse_action(event.payload.action), Type | Select)
            except ActionSyntaxError:
                continue
    return typed


class _Leave:
    """The runner's `on_idle` in a worker: a session waiting for a person is left (False), unless its
    page holds typed input (True: wait here, as a runner always did). The log is read once per change."""

    def __init__(self, store: EventStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self._seen = -1
        self._stay = False

    def __call__(self, state: SessionState) -> bool:
        if state.seq != self._seen:
            self._seen = state.seq
            self._stay = _typed_on_page(self.store.load(self.session_id))
        return self._stay


class Worker:
    """Claims runnable sessions and runs up to `concurrency` of them at once, until `stop()`."""

    def __init__(
        self,
        store: EventStore,
        *,
        concurrency: int = 1,
        artifacts: ArtifactStore | Path | None = None,
        browser_endpoint: str | None = None,
        shared_browser: bool = False,
        stale_after: float = STALE_AFTER,
        poll: float = 1.0,
        on_run: Callable[[str, str], None] | None = None,
    ) -> None:
        """`on_run(session_id, what)` hears of each session taken ("runs") and left ("left <status>").
        With `shared_browser`, the browser sessions it runs share one Chromium, each in a context of its
        own (`BrowserServer`), started when the first needs it and stopped with the worker."""
        if concurrency < 1:
            raise ValueError("a worker runs at least one session at a time")
        self.store = store
        self.concurrency = concurrency
        self.artifacts = artifact_store(artifacts)
        self.browser_endpoint: BrowserEndpoint | None = browser_endpoint
        self._browser_server = None
        if shared_browser and browser_endpoint is None:
            from planner.browser.server import BrowserServer  # Playwright, only for a worker that serves one

            self._browser_server = BrowserServer()
            self.browser_endpoint = self._browser_server
        self.stale_after = stale_after
        self.poll = poll
        self.on_run = on_run
        self.owner = f"{socket.gethostname()}:{os.getpid()}:w{uuid.uuid4().hex[:8]}"
        """The lease owner token ("host:pid:tag", as `_holder_gone` reads it): which worker runs a session."""
        self.runs = 0
        """Sessions taken so far."""
        self._slots: dict[tuple[str, int], threading.Thread] = {}
        """Running sessions by (session id, lease generation)."""
        self._lock = threading.Lock()
        self._freed = threading.Event()
        self._stopping = threading.Event()

    def stop(self) -> None:
        """Stop claiming; running sessions stop at their next step boundary and are handed back
        (left running, lease released) for another worker."""
        self._stopping.set()
        self._freed.set()

    def run(self) -> int:
        """Claim and run sessions until `stop()`; returns how many were taken. Waits for the sessions
        it runs to be handed back before returning."""
        try:
            while not self._stopping.is_set():
                self._freed.clear()
                free = self.concurrency - self._busy()
                if free > 0 and self._claim(free) == free:
                    continue  # every free slot found work: there may be more waiting
                if self._busy() >= self.concurrency:
                    self._freed.wait(self.poll)
                else:
                    self._wait_for_work()
        finally:
            self.stop()
            for thread in list(self._slots.values()):
                thread.join()
            if self._browser_server is not None:
                self._browser_server.stop()
        return self.runs

    def _busy(self) -> int:
        with self._lock:
            return len(self._slots)

    def _claim(self, free: int) -> int:
        try:
            taken = self.store.claim_runnable(self.owner, time.time(), self.stale_after, limit=free, pid=os.getpid())
        except StoreError as error:  # the database may come back; a worker outlives a restart
            _log.warning("worker %s: could not claim sessions: %s", self.owner, error)
            self._stopping.wait(self.poll)
            return 0
        for session_id, lease in taken:
            thread = threading.Thread(target=self._run, args=(session_id, lease), name=f"worker-{session_id}")
            with self._lock:
                self._slots[session_id, lease] = thread
            self.runs += 1
            thread.start()
        return len(taken)

    def _wait_for_work(self) -> None:
        try:
            self.store.wait_for_work(self.poll)
        except StoreError as error:
            _log.warning("worker %s: could not wait for work: %s", self.owner, error)
            self._stopping.wait(self.poll)

    def _run(self, session_id: str, lease: int) -> None:
        """Run one claimed session until it ends, waits for a person, or the worker stops."""
        outcome = "left"
        try:
            self._report(session_id, "runs")
            try:
                runner = Runner(
                    self.store,
                    session_id,
                    artifacts=self.artifacts,
                    stale_after=self.stale_after,
                    browser_endpoint=self.browser_endpoint,
                )
            except Exception as error:  # noqa: BLE001 - whatever stops a runner being built is the session's reason
                self._set_aside(session_id, lease, error)
                return
            leave = _Leave(self.store, session_id)
            state = runner.run(self._stopping.is_set, leave, claimed=lease, hand_over=True)
            outcome = f"left {state.status.value}"
        except StoreError as error:  # lease lost or the database gone: the session stays with the store
            outcome = f"left ({error})"
        except Exception:  # noqa: BLE001 - a runner thread must report, never vanish silently
            _log.exception("worker %s: the runner of session %s stopped", self.owner, session_id)
            outcome = "left after an error"
        finally:
            with self._lock:
                self._slots.pop((session_id, lease), None)
            self._freed.set()
            self._report(session_id, outcome)

    def _set_aside(self, session_id: str, lease: int, error: Exception) -> None:
        """No runner could be built (its model or its log cannot be used): pause a running session with
        the reason, so workers stop taking it until someone acts. A session that cannot even be paused
        keeps the lease until it goes stale, and is tried again then."""
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
        _log.warning("worker %s: session %s cannot run: %s", self.owner, session_id, reason)
        try:
            state = load_state(self.store, session_id)
            if state.status is not RunStatus.RUNNING:
                return
            recorder = Recorder(state)
            recorder.record(Kind.SESSION_STATUS, status=RunStatus.PAUSED.value, reason=reason, cause=Cause.ERROR)
            self.store.append(
                session_id,
                recorder.take(),
                status=state.status.value,
                reason=state.reason,
                cause=state.cause.value if state.cause else None,
                steps=state.steps,
                lease=lease,
            )
            self.store.release(session_id, lease)
        except Exception as failure:  # noqa: BLE001 - the lease then goes stale and the session is tried again
            _log.warning("worker %s: could not pause session %s: %s", self.owner, session_id, failure)

    def _report(self, session_id: str, what: str) -> None:
        if self.on_run is not None:
            self.on_run(session_id, what)
