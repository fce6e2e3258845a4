"""Per-tab snapshot of the session on screen, folded incrementally from the store, masked.

A redraw reads the log only when the change feed says the session changed since the last read
(`sessions.store.feed`); on SQLite, which has no feed, every redraw reads it. Every event is masked
(`planner.secrets`) before it is folded, so nothing drawn from the state or the events shows a secret;
an event that brings a new secret (rare: once per password typed) makes the fold start over from event
1 with it, since the secret may be in what was folded before."""

from __future__ import annotations

from collections import defaultdict

import streamlit as st

from planner.diff import EditDiff, PlanChanges
from planner.events import Event, Kind
from planner.secrets import Secrets, secrets_in
from planner.state import SessionState
from ui.context import Console

__all__ = ["Live", "live"]


class Live:
    """The latest state of one session plus its events indexed by node, for the inspector.

    `approval_request` is the event number of the newest approval request, which names the request.
    `plan_changes` is every change to the plan so far, the operator's edits and the engine's
    re-expansions and repairs, found as the events are folded (no second pass over the log).
    `secrets` are those of the log read so far, with their values (they never leave this process).
    """

    def __init__(self, ctx: Console, session_id: str) -> None:
        self.ctx = ctx
        self.session_id = session_id
        self.secrets = Secrets()
        self._start_over()
        self._stamp: int | None = None
        """The change feed's stamp of the session as of the last read of its log."""

    def _start_over(self) -> None:
        self.state = SessionState()
        self.by_node: defaultdict[str, list[Event]] = defaultdict(list)
        self.recent: list[Event] = []
        self.approval_request = 0
        self._changes = PlanChanges()

    def refresh(self) -> SessionState:
        """The state with every event the store has; the store is read only if the session changed."""
        stamp = self.ctx.changes.stamp(self.session_id)  # before the read: a change during it moves it again
        if stamp == self._stamp:
            return self.state
        events = self.ctx.reads.load(self.session_id, after=self.state.seq)
        secrets = secrets_in(events, self.secrets)
        if secrets != self.secrets and self.state.seq:
            self._start_over()
            events = self.ctx.reads.load(self.session_id, after=0)
            secrets = secrets_in(events)
        self.secrets = secrets
        for raw in events:
            event = secrets.mask_event(raw)
            self._changes.apply(self.state, event)
            if event.node_id is not None:
                self.by_node[event.node_id].append(event)
            self.recent.append(event)
            self._note(event)
        del self.recent[:-200]
        self._stamp = stamp
        return self.state

    @property
    def plan_changes(self) -> list[EditDiff]:
        return self._changes.diffs

    def _note(self, event: Event) -> None:
        if event.kind is Kind.APPROVAL_REQUESTED:
            self.approval_request = event.seq


def live(ctx: Console, session_id: str) -> Live:
    """This tab's follower for the session (a tab never shares mutable state with another tab)."""
    followers: dict[str, Live] = st.session_state.setdefault("_live", {})
    if session_id not in followers:
        followers[session_id] = Live(ctx, session_id)
    return followers[session_id]
