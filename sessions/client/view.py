"""One moment of a session, as a client draws it: `SessionView`, made by a `Follower` of its log.

A follower folds the log incrementally and masked: it reads only the events past the ones it has,
and only when the change feed says the session moved (`sessions.store.feed`; on SQLite every look
reads). Every event is masked (`planner.secrets`) before it is folded, so nothing drawn from a view
shows a secret; an event that brings a new secret (once per password typed) makes the fold start
over, since the secret may be in what was folded before.

A view is everything one redraw of a session needs, read together: the state, the store's row
(lease, heartbeat), the commands still queued, the answers to handled commands, the runner's health
and the held action's screenshot. A page that draws from one view never mixes two moments.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from planner.diff import EditDiff, PlanChanges
from planner.events import CommandApplied, CommandRejected, Event, Kind
from planner.secrets import Secrets, secrets_in
from planner.state import RunStatus, SessionState
from sessions.client.outcomes import CommandOutcome
from sessions.store import STALE_AFTER, QueuedCommand, SessionInfo
from sessions.store.feed import Changes, Reads

if TYPE_CHECKING:
    from sessions.worker.pool import Runners

__all__ = ["RECENT_EVENTS", "Follower", "RunnerView", "SessionView"]

RECENT_EVENTS = 200
"""How many of the newest events a view keeps in order (the live page looks its screenshot up there)."""


@dataclass(frozen=True)
class RunnerView:
    """Who runs the session, as far as this client can tell."""

    alive: bool
    """A runner is in charge: this client's own, the workers', or another process with a fresh lease."""
    here: bool
    """This client's runners (the console's threads, or the workers it hands sessions to) have it."""
    owner: str | None
    """The lease holder's `host:pid:tag`, if any."""
    error: str | None = None
    """Why this client's own runner for it stopped, if it crashed."""


@dataclass(frozen=True)
class SessionView:
    """A session at one moment. The state and the per-node events are the follower's own and are folded
    further by its next `watch`: draw from one view, then ask for the next."""

    session_id: str
    state: SessionState
    info: SessionInfo
    pending: tuple[QueuedCommand, ...]
    handled: Mapping[str, CommandOutcome]
    """Every command its runner has handled, by command id (reasons and warnings masked)."""
    runner: RunnerView
    by_node: Mapping[str, Sequence[Event]]
    recent: Sequence[Event]
    plan_changes: Sequence[EditDiff]
    secrets: Secrets
    approval_request: int = 0
    """The event number of the newest approval request (it tells one request's answer from the next's)."""
    approval_picture: bytes | None = None
    """The screenshot taken when the pending action was held, read with the view (None: none to show)."""
    read_at: float = field(default_factory=time.time)


class Follower:
    """The follower of one session's log for one reader (a console tab, a CLI watch).

    One reader can still read from two threads at once: a console tab whose run was replaced goes on in
    its old script thread until its next Streamlit call, and folding a big log has none (29,902 events
    took seconds, and the second fold started again from event 1 into the first's state:
    "event 1 applied after 29902"). So one read and fold happens at a time (`_lock`)."""

    def __init__(self, session_id: str, reads: Reads, changes: Changes, runners: Runners) -> None:
        self._lock = threading.RLock()
        self.session_id = session_id
        self._reads = reads
        self._changes = changes
        self._runners = runners
        self.secrets = Secrets()
        self._stamp: int | None = None
        """The change feed's stamp of the session as of the last read of its log."""
        self._picture: tuple[int, bytes | None] = (0, None)
        self._start_over()

    def _start_over(self) -> None:
        self.state = SessionState()
        self._by_node: defaultdict[str, list[Event]] = defaultdict(list)
        self._recent: list[Event] = []
        self._handled: dict[str, CommandOutcome] = {}
        self._approval_request = 0
        self._plan = PlanChanges()

    def refresh(self) -> SessionState:
        """The state with every event the store has; the log is read only if the session changed."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> SessionState:
        stamp = self._changes.stamp(self.session_id)  # before the read: a change during it moves it again
        if stamp == self._stamp:
            return self.state
        events = self._reads.load(self.session_id, after=self.state.seq)
        secrets = secrets_in(events, self.secrets)
        if secrets != self.secrets and self.state.seq:
            self._start_over()
            events = self._reads.load(self.session_id, after=0)
            secrets = secrets_in(events)
        self.secrets = secrets
        for raw in events:
            self._fold(secrets.mask_event(raw))
        del self._recent[:-RECENT_EVENTS]
        self._stamp = stamp
        return self.state

    def watch(self) -> SessionView:
        """The session now: its log folded up to date, read together with its row, queue and runner."""
        with self._lock:
            return self._watch()

    def _watch(self) -> SessionView:
        state = self._refresh()
        info = self._reads.session(self.session_id)
        here = self._runners.running(self.session_id)
        runner = RunnerView(
            alive=here or info.runner_alive(self._reads.store.clock(), STALE_AFTER),
            here=here,
            owner=info.lease_owner,
            error=self._runners.error(self.session_id),
        )
        return SessionView(
            session_id=self.session_id,
            state=state,
            info=info,
            pending=tuple(self._reads.pending(self.session_id)),
            handled=dict(self._handled),
            runner=runner,
            by_node=self._by_node,
            recent=tuple(self._recent),
            plan_changes=tuple(self._plan.diffs),
            secrets=self.secrets,
            approval_request=self._approval_request,
            approval_picture=self._approval_picture(state),
        )

    def _fold(self, event: Event) -> None:
        self._plan.apply(self.state, event)
        if event.node_id is not None:
            self._by_node[event.node_id].append(event)
        self._recent.append(event)
        if event.kind is Kind.APPROVAL_REQUESTED:
            self._approval_request = event.seq
        handled = event.payload
        if isinstance(handled, CommandApplied):
            self._handled[handled.command_id] = CommandOutcome(True, None, event.seq, handled.warning)
        elif isinstance(handled, CommandRejected):
            self._handled[handled.command_id] = CommandOutcome(False, handled.reason, event.seq)

    def _approval_picture(self, state: SessionState) -> bytes | None:
        """The pending approval's screenshot, read once per request (a screenshot never changes)."""
        approval = state.approval
        if state.status is not RunStatus.AWAITING_APPROVAL or approval is None or not approval.screenshot:
            return None
        if self._picture[0] != self._approval_request:
            try:
                picture: bytes | None = Path(approval.screenshot).read_bytes()
            except OSError:
                picture = None
            self._picture = (self._approval_request, picture)
        return self._picture[1]
