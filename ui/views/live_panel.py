"""The session page: controls, status, approval box, tree, live page, the node's action bar, inspector, plan
editing, timeline, plan changes.

While the run can still change it is one fragment that Streamlit redraws on a timer, so every part
follows the run, and widgets keep their keys across redraws, so forms keep what the operator is
typing. A finished session cannot change, so its page is drawn once and redrawn only when the
operator interacts. Only the sidebar (which session, a new session) and the exports redraw the whole
app; the exports live outside this fragment (see `ui.views.export`).

Which tab is open is bound to the URL (`?tab=`, `?panel=`), like the session and the node.

A redraw reads the session's log, row and queue, and the listing, only when the change feed says
something changed (`sessions.feed`: pushed by PostgreSQL; on SQLite every redraw reads them).
"""

from __future__ import annotations

import streamlit as st

from planner.state import SessionState
from sessions.store import SessionInfo
from ui.access import drawing_for
from ui.commands import drawn
from ui.context import Console
from ui.url import picked_elsewhere, url_behind
from ui.views.coplan import render_plan_review
from ui.views.edit import render_approval, render_node_edit, render_settings
from ui.views.header import render_controls, render_status
from ui.views.inbox import inbox_behind
from ui.views.inspector import render_inspector, render_run_panel
from ui.views.live import live
from ui.views.node_actions import EDIT_TAB, PANEL_KEY, render_node_actions
from ui.views.page_view import render_live_page, shows_live_page
from ui.views.plan_changes import render_plan_changes
from ui.views.sidebar import RATE_WINDOW, render_sessions
from ui.views.timeline import keep_timeline, render_timeline
from ui.views.tree import render_node_picker, render_tree

__all__ = ["REFRESH_SECONDS", "render_live_panel"]

REFRESH_SECONDS = 0.75


def render_live_panel(ctx: Console, session_id: str) -> None:
    if live(ctx, session_id).refresh().finished:
        _finished_panel(ctx, session_id)
    else:
        _running_panel(ctx, session_id)


@st.fragment(run_every=REFRESH_SECONDS)
def _running_panel(ctx: Console, session_id: str) -> None:
    drawing_for()  # once a tick, for every button's role check (see `ui.access`)
    state = live(ctx, session_id).refresh()
    if state.finished:
        st.rerun()  # the whole page, once: from now on it is the finished session's, which does not refresh
    sessions = ctx.reads.sessions()  # once a tick, if anything changed: the inbox check and the table share it
    if inbox_behind(sessions):
        st.rerun()  # the whole page: only its run draws the attention inbox (see `ui.views.inbox`)
    _panel(ctx, session_id, sessions, state)


@st.fragment
def _finished_panel(ctx: Console, session_id: str) -> None:
    _panel(ctx, session_id, ctx.reads.sessions(), live(ctx, session_id).refresh())


def _panel(ctx: Console, session_id: str, sessions: list[SessionInfo], state: SessionState) -> None:
    """The session's panel drawn from `state`, which the caller has just refreshed (one log read a tick)."""
    follower = live(ctx, session_id)
    if url_behind(session_id, state.tree) or picked_elsewhere([info.id for info in sessions]):
        st.rerun()  # the whole page: only its run writes the URL and follows the sidebar (see `ui.url`)
    render_controls(ctx, session_id, state)
    render_status(ctx, session_id, state)
    render_approval(ctx, session_id, state, follower.approval_request)
    left, right = st.columns([3, 2], gap="medium")
    with right:
        render_plan_review(ctx, session_id, state)
        node_id = render_node_picker(state)
        node = state.tree.get(node_id) if node_id else None
        render_node_actions(ctx, session_id, state, node)
    with left:
        aside = (lambda: render_live_page(follower)) if shows_live_page(state) else None
        render_tree(ctx, session_id, state, follower.failed, aside)
    with right:
        node_tab, edit_tab, run_tab = st.tabs(["Node", EDIT_TAB, "Task & answer"], key=PANEL_KEY, bind="query-params")
        with node_tab:
            render_inspector(follower, node_id)
        with edit_tab:
            render_node_edit(ctx, session_id, state, node)
        with run_tab:
            render_run_panel(state)
    settings_tab, timeline_tab, changes_tab, sessions_tab = st.tabs(
        ["Run settings", "Timeline", "Plan changes", "All sessions"], key="tab", bind="query-params"
    )
    with settings_tab:
        render_settings(ctx, session_id, state)
    # Only the open one of these tabs is drawn (the tabs are bound to the URL, so Streamlit knows
    # which): the timeline's, the plan changes' and the sessions' tables cost every tick otherwise. The
    # settings are forms, whose typing lives only in the browser, so they are always drawn, like the
    # Edit plan tab.
    with timeline_tab:
        if timeline_tab.open:
            render_timeline(ctx, session_id, state)
        else:
            keep_timeline(session_id)
    with changes_tab:
        if changes_tab.open:
            render_plan_changes(follower, state, node_id)
    with sessions_tab:
        if sessions_tab.open:
            render_sessions(sessions, ctx.reads.recent_actions(RATE_WINDOW))
    drawn()
