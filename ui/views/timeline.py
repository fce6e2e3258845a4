"""The run as it was at any event (read-only), the event list around it, and forking from there."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.diff import plan_diff
from planner.events import Payload
from planner.state import SessionState
from sessions.client import SessionView
from sessions.client.errors import SessionsError
from sessions.client.markdown import md, md_line, short
from ui.access import current, locked
from ui.commands import drawn_press, made_by_press, remember_made
from ui.context import Console
from ui.status import status_line
from ui.tree_chart import build_chart
from ui.views.sidebar import select_session

__all__ = ["keep_timeline", "render_timeline"]

_SCRUBBED = "_timeline_scrubbed"
"""Session state: {slider key: whether the slider stood before the live end when last drawn}."""


_BULKY = frozenset({"observation", "prompt", "raw", "output"})
"""Payload fields too long for a one-line summary; the inspector shows them whole."""


def _detail(payload: Payload) -> str:
    """One line naming each field of the event's payload, read through its model."""
    return ", ".join(f"{name}={getattr(payload, name)}" for name in type(payload).model_fields if name not in _BULKY)


def render_timeline(ctx: Console, view: SessionView) -> None:
    session_id, latest = view.session_id, view.state
    last_seq = latest.seq
    if last_seq < 2:
        st.caption("The timeline fills in as the session runs.")
        return
    key = _slider_key(session_id)
    seq = st.slider("Event", 1, last_seq, last_seq, key=key)
    st.session_state.setdefault(_SCRUBBED, {})[key] = seq < last_seq
    state = latest if seq == last_seq else ctx.client.state_at(session_id, seq, view)
    st.markdown(f"At event {seq}: step {state.steps}, {md(state.status.value)} — {md_line(status_line(state), 300)}")
    if seq == last_seq:
        st.caption("This is the live plan, drawn above; move the slider back to see the plan as it was then.")
    else:
        _past_chart(session_id, state, latest, seq)
    events = ctx.client.events(session_id, min(last_seq, seq + 5), after=max(0, seq - 15), view=view)
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
    # Pressed, it forks in the same run that drew it enabled: no callback runs on an older judgement.
    if st.button(f"Fork from event {seq}", key="fork_btn", **drawn_press("fork"), **locked("fork")):
        select_session(
            made_by_press("fork") or remember_made("fork", ctx.client.fork(session_id, seq, by=current().name))
        )
    if latest.forked_from is not None:
        _compare_with_parent(ctx, session_id, latest, *latest.forked_from)


def keep_timeline(session_id: str) -> None:
    """Keep the slider where the operator left it while the Timeline tab is closed and not drawn
    (Streamlit forgets a widget that a run does not draw). A slider at the live end is let go, so the
    tab opens on the run as it is then."""
    key = _slider_key(session_id)
    if st.session_state.get(_SCRUBBED, {}).get(key) and key in st.session_state:
        st.session_state[key] = st.session_state[key]


def _slider_key(session_id: str) -> str:
    return f"timeline_{session_id}"


def _past_chart(session_id: str, state: SessionState, latest: SessionState, seq: int) -> None:
    """The plan as it was at `seq`, drawn like the live one, each node that changes afterwards marked Δ."""
    diff = plan_diff(state.tree, latest.tree)
    _marked_chart(state, diff.changed, f"timeline_chart_{session_id}", 420, f"Plan tree at event {seq}")
    st.caption(f"Since event {seq}: {len(diff.changed)} nodes changed (marked Δ), {len(diff.added)} nodes added.")


def _marked_chart(state: SessionState, changed: tuple[str, ...], key: str, height: int, alt: str) -> None:
    """A plan drawn whole, like the live one, each node in `changed` marked Δ (read-only: no selection)."""
    chart = build_chart(state, changed=changed, collapse_closed=False)
    st.echarts_chart(chart.option, key=key, height=height, renderer=chart.renderer, alt=alt)


def _compare_with_parent(ctx: Console, session_id: str, fork: SessionState, parent_id: str, at_seq: int) -> None:
    """Where this fork and the session it was forked from went separate ways, node by node."""
    try:  # cached by (session, last event): the live panel redraws this every 0.75 s
        parent = ctx.client.state_at(parent_id, ctx.client.info(parent_id).last_seq)
    except SessionsError as error:
        st.caption(f"The session this was forked from cannot be read: {md(str(error))}")
        return
    diff = plan_diff(parent.tree, fork.tree)
    st.markdown(f"**Compared with {md(parent_id)}** (forked at event {at_seq}; both as they are now)")
    if not diff:
        st.caption("The two plans are the same so far.")
        return
    # Both plans drawn alike, side by side, each marking (Δ) the nodes where it differs from the other:
    # a node only one of them has is marked in that one.
    ours, theirs = st.columns(2, gap="small")
    for column, state, marked, name in (
        (theirs, parent, (*diff.changed, *diff.missing), f"the parent, {parent_id}"),
        (ours, fork, (*diff.changed, *diff.added), "this fork"),
    ):
        with column:
            st.caption(f"Plan of {md(name)}: {len(marked)} of its nodes differ (Δ)")
            _marked_chart(state, marked, f"fork_chart_{session_id}_{state is fork}", 360, f"Plan tree of {name}")
    rows = [
        {
            "node": node_id,
            "in the parent": _state_of(parent, node_id),
            "in this fork": _state_of(fork, node_id),
            "description (fork, else parent)": short(
                (fork.tree.nodes.get(node_id) or parent.tree[node_id]).description, 100
            ),
        }
        for node_id in (*diff.changed, *diff.added, *diff.missing)
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _state_of(state: SessionState, node_id: str) -> str:
    node = state.tree.nodes.get(node_id)
    return f"{node.type.value} {node.status.value}" if node is not None else "—"
