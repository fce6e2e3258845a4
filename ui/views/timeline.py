"""The run as it was at any event (read-only), the event list around it, and forking from there."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.events import Payload
from planner.render import tree_text
from planner.state import SessionState
from sessions.markdown import md, short
from sessions.runner import fork_session
from sessions.service import TimeTravel
from ui.context import Console
from ui.status import status_line
from ui.views.sidebar import select_session

__all__ = ["render_timeline"]


def _time_travel(ctx: Console) -> TimeTravel:
    travel = st.session_state.get("_time_travel")
    if travel is None:
        travel = st.session_state["_time_travel"] = TimeTravel(ctx.store)
    return travel


_BULKY = frozenset({"observation", "prompt", "raw", "output"})
"""Payload fields too long for a one-line summary; the inspector shows them whole."""


def _detail(payload: Payload) -> str:
    """One line naming each field of the event's payload, read through its model."""
    return ", ".join(f"{name}={getattr(payload, name)}" for name in type(payload).model_fields if name not in _BULKY)


def render_timeline(ctx: Console, session_id: str, latest: SessionState) -> None:
    last_seq = latest.seq
    if last_seq < 2:
        st.caption("The timeline fills in as the session runs.")
        return
    seq = st.slider("Event", 1, last_seq, last_seq, key=f"timeline_{session_id}")
    state = latest if seq == last_seq else _time_travel(ctx).at(session_id, seq)
    st.markdown(f"At event {seq}: step {state.steps}, {md(state.status.value)} — {md(status_line(state))}")
    if seq == last_seq:
        st.caption("This is the live plan, drawn above; move the slider back to see the plan as it was then.")
    else:
        st.code(tree_text(state.tree), language=None)
    events = ctx.store.load(session_id, after=max(0, seq - 15), upto=min(last_seq, seq + 5))
    table = pd.DataFrame(
        [
            {
                "seq": e.seq,
                "kind": e.kind.value,
                "node": e.node_id or "",
                "detail": short(_detail(e.payload), 140),
            }
            for e in events
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
    if st.button(f"Fork from event {seq}", key="fork_btn"):
        select_session(fork_session(ctx.store, session_id, seq))
