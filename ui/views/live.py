"""Per-tab snapshot of the session on screen, folded incrementally from the store."""

from __future__ import annotations

from collections import defaultdict

import streamlit as st

from planner.events import Event
from planner.state import SessionState, apply
from ui.context import Console

__all__ = ["Live", "live"]


class Live:
    """The latest state of one session plus its events indexed by node, for the inspector."""

    def __init__(self, ctx: Console, session_id: str) -> None:
        self.ctx = ctx
        self.session_id = session_id
        self.state = SessionState()
        self.by_node: defaultdict[str, list[Event]] = defaultdict(list)
        self.recent: list[Event] = []

    def refresh(self) -> SessionState:
        for event in self.ctx.store.load(self.session_id, after=self.state.seq):
            apply(self.state, event)
            if event.node_id is not None:
                self.by_node[event.node_id].append(event)
            self.recent.append(event)
        del self.recent[:-200]
        return self.state


def live(ctx: Console, session_id: str) -> Live:
    """This tab's follower for the session (a tab never shares mutable state with another tab)."""
    followers: dict[str, Live] = st.session_state.setdefault("_live", {})
    if session_id not in followers:
        followers[session_id] = Live(ctx, session_id)
    return followers[session_id]
