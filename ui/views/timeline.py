"""The run as it was at any event (read-only), the event list around it, and forking from there.

The event shown is picked three ways: a number box (type an event and press Enter), the arrows beside
it (one event back or on) and a slider for long jumps. It lives in session state under a key no widget has (`_AT`),
so all three show the same event, and it outlives the tab being closed; `None` there means the live
end, which the timeline follows as the run grows.

Its charts follow the agent like the live tree ("Follow agent", `ui.url.following`): the node the agent
works on at the event shown and the way down to it stay in view; once the operator selects a node they
are drawn around the selection instead.
"""

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
from ui.url import following, selected_node
from ui.views.sidebar import select_session

__all__ = ["render_timeline"]

_AT = "_timeline_at"
"""Session state: {session id: the event the timeline shows, or None at the live end}."""
_HEIGHT = 420
"""Pixels: the past plan's chart, and each of a fork's and its parent's charts side by side."""


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
    seq = _pick_event(session_id, last_seq)
    state = latest if seq == last_seq else ctx.client.state_at(session_id, seq, view)
    st.markdown(f"At event {seq}: step {state.steps}, {md(state.status.value)} — {md_line(status_line(state), 300)}")
    if seq == last_seq:
        st.caption(
            "This is the live plan, drawn above; step back or type an earlier event to see the plan as it was then."
        )
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


def _pick_event(session_id: str, last_seq: int) -> int:
    """The number box, the arrows beside it and the slider over events 1..`last_seq`; the event they show.

    Each widget is set to the event shown before it is drawn, and only when it shows another one: a
    value set from the script replaces what the operator is typing in the box. So at the live end,
    which moves at every step of a running session, the box is left empty, the end in its placeholder.
    Their callbacks write the event picked (`_pick`); the arrows carry the event they lead to, worked
    out as they are drawn, so a callback Streamlit runs twice for one press still moves one event (see
    `ui.commands`)."""
    at = st.session_state.setdefault(_AT, {}).get(session_id)
    seq = last_seq if at is None else max(1, min(at, last_seq))
    number, slider = f"timeline_event_{session_id}", f"timeline_{session_id}"
    for key, value in ((number, None if seq == last_seq else seq), (slider, seq)):
        if key not in st.session_state or st.session_state[key] != value:
            st.session_state[key] = value
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small", key="timeline_steps"):
        st.button(
            "",
            icon=":material/chevron_left:",
            key="timeline_back",
            help=f"One event back (to {seq - 1})" if seq > 1 else "This is the first event",
            disabled=seq <= 1,
            on_click=_pick,
            args=(session_id, seq - 1, last_seq),
        )
        st.number_input(
            "Event",
            min_value=1,
            max_value=last_seq,
            step=1,
            key=number,
            placeholder=f"{last_seq} (live)",
            help=f"Type an event (1 to {last_seq}) and press Enter; empty, the timeline follows the live end",
            on_change=_picked,
            args=(session_id, number, last_seq),
            width=160,
        )
        st.button(
            "",
            icon=":material/chevron_right:",
            key="timeline_on",
            help=f"One event on (to {seq + 1})" if seq < last_seq else "This is the live end",
            disabled=seq >= last_seq,
            on_click=_pick,
            args=(session_id, seq + 1, last_seq),
        )
    st.slider(
        "Event",
        min_value=1,
        max_value=last_seq,
        key=slider,
        label_visibility="collapsed",
        on_change=_picked,
        args=(session_id, slider, last_seq),
    )
    return seq


def _picked(session_id: str, key: str, last_seq: int) -> None:
    """The number box's or the slider's callback: show the event it holds."""
    value = st.session_state.get(key)
    if isinstance(value, int | float):
        _pick(session_id, int(value), last_seq)


def _pick(session_id: str, seq: int, last_seq: int) -> None:
    """Show event `seq`; the live end (`last_seq` as drawn) is followed as the run grows."""
    st.session_state.setdefault(_AT, {})[session_id] = None if seq >= last_seq else max(1, seq)


def _past_chart(session_id: str, state: SessionState, latest: SessionState, seq: int) -> None:
    """The plan as it was at `seq`, drawn like the live one, each node that changes afterwards marked Δ."""
    diff = plan_diff(state.tree, latest.tree)
    _marked_chart(state, diff.changed, f"timeline_chart_{session_id}", _HEIGHT, f"Plan tree at event {seq}")
    st.caption(f"Since event {seq}: {len(diff.changed)} nodes changed (marked Δ), {len(diff.added)} nodes added.")


def _marked_chart(state: SessionState, changed: tuple[str, ...], key: str, height: int, alt: str) -> None:
    """A plan drawn whole, like the live one, each node in `changed` marked Δ (read-only: a click selects
    nothing), around the agent while the tree follows it, else around the operator's selection."""
    chart = build_chart(
        state, changed=changed, collapse_closed=False, selected=selected_node(), follow=following(), height=height
    )
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
            _marked_chart(state, marked, f"fork_chart_{session_id}_{state is fork}", _HEIGHT, f"Plan tree of {name}")
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
