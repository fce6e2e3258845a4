"""The session page: controls, status, approval box, tree, live page, the node's action bar, inspector, plan
editing, timeline, plan changes.

While the run goes on it is one fragment that Streamlit redraws on a timer, so every part follows
the run, and widgets keep their keys across redraws, so forms keep what the operator is typing.

A session that is not running changes only when a command reaches it, so its panel is drawn once,
and again only when the operator interacts with it or something changed (a timed fragment that
draws nothing, `_watch`, asks the store): a panel redrawn on a timer while the operator edits a
paused run's plan would cost them keystrokes and clicks. Which tab is open is bound to the URL
(`?tab=`, `?panel=`), like the session and the node (docs/architecture.md, "ui/views/live_panel.py").
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import streamlit as st

from planner.state import RunStatus, SessionState
from sessions.client import SessionInfo, SessionView
from ui.access import drawing_for
from ui.context import Console, database_trouble
from ui.forms import settle_results
from ui.url import picked_elsewhere, url_behind
from ui.views.coplan import render_plan_review
from ui.views.edit import render_approval, render_node_edit, render_settings
from ui.views.header import render_controls, render_status
from ui.views.inbox import inbox_behind
from ui.views.inspector import render_inspector, render_run_panel
from ui.views.live import follower, watch
from ui.views.node_actions import EDIT_TAB, PANEL_KEY, render_node_actions
from ui.views.page_view import render_live_page, shows_live_page
from ui.views.plan_changes import render_plan_changes
from ui.views.sidebar import RATE_WINDOW, render_sessions
from ui.views.timeline import render_timeline
from ui.views.tree import render_node_picker, render_tree
from ui.views.verdict import render_verdict

__all__ = [
    "FINISHED_REFRESH_SECONDS",
    "QUEUED_REFRESH_SECONDS",
    "REFRESH_SECONDS",
    "STILL_REFRESH_SECONDS",
    "render_live_panel",
]

REFRESH_SECONDS = 0.75
"""How often the panel of a running session is redrawn."""
STILL_REFRESH_SECONDS = 0.75
"""How often a page whose session is not running asks the store whether anything changed."""
QUEUED_REFRESH_SECONDS = 0.1
"""The same while commands wait in the session's queue: a press returns at once, so its effect (a
paused run's step, say) shows as soon as the runner has applied it, not at the next tick."""
FINISHED_REFRESH_SECONDS = 3.0
"""The same for a finished session, which only the inbox or the listing can change."""

_DRAWN = "_still_drawn"
"""Session state: what the still panel was last drawn from, (session id, event number, the listing
if the All sessions tab was open, else None); the watcher compares the store with it."""


def _guarded(draw: Callable[..., None]) -> Callable[..., None]:
    """`draw` with the database's trouble shown in one sentence (`ui.context.database_trouble`): a
    fragment's run is the page's own in that, and a panel that lost its database says so."""

    @functools.wraps(draw)
    def drawing(*args: object) -> None:
        with database_trouble():
            draw(*args)

    return drawing


def render_live_panel(ctx: Console, view: SessionView) -> None:
    """The panel for the session's status now: redrawn on a timer while it runs, else drawn on change.

    A whole run of the page draws the inbox just before this, from the same `view`."""
    running = view.state.status is RunStatus.RUNNING
    (_running_panel if running else _still_panel)(ctx, view.session_id, running)
    if not running:
        (_watch_finished if view.state.finished else _watch)(ctx, view.session_id)


def _live(ctx: Console, session_id: str, running: bool) -> None:
    """The panel, as the fragment drawn for a running (`running`) or a still session draws it.

    Both fragments wrap this one function, so Streamlit gives them one id: a press on a control the
    still panel drew reaches its callback after a run of the page has drawn the running panel in its
    place (Streamlit drops a press whose fragment the last run of the page did not draw)."""
    drawing_for()  # once a tick, for every button's role check (see `ui.access`)
    view = watch(ctx, session_id)
    if (view.state.status is RunStatus.RUNNING) != running:
        st.rerun()  # the whole page, once: for the panel that follows the new status
    sessions = ctx.client.listing()  # once a tick, if anything changed: the inbox check and the table share it
    if running and inbox_behind(sessions):
        st.rerun()  # the whole page: only its run draws the attention inbox (see `ui.views.inbox`)
    fleet = _panel(ctx, view, sessions)
    if running and view.pending:
        _watch_stopping(ctx, session_id)
    if not running:  # what the watcher compares the store with
        st.session_state[_DRAWN] = (session_id, view.state.seq, sessions if fleet else None)
        if view.pending:  # drawn in the panel: a press reruns only the panel, not the page's watcher
            _watch_queued(ctx, session_id)


_running_panel = st.fragment(run_every=REFRESH_SECONDS)(_guarded(_live))
"""Redrawn on a timer while the run goes on."""
_still_panel = st.fragment(_guarded(_live))
"""Drawn by the page's run and by the operator's presses in it; the watcher asks for the rest."""


@st.fragment(run_every=STILL_REFRESH_SECONDS)
def _watch(ctx: Console, session_id: str) -> None:
    """Draws nothing: asks for a whole run once the store differs from what the still panel shows."""
    _rerun_if_changed(ctx, session_id)


@st.fragment(run_every=QUEUED_REFRESH_SECONDS)
def _watch_queued(ctx: Console, session_id: str) -> None:
    """`_watch` while commands are queued: soon after the runner applies them."""
    _rerun_if_changed(ctx, session_id)


@st.fragment(run_every=QUEUED_REFRESH_SECONDS)
@_guarded
def _watch_stopping(ctx: Console, session_id: str) -> None:
    """While a running session's commands wait: a whole run of the page as soon as it stops running (a
    Pause, a Stop), rather than at the panel's next tick. Pause → "paused" took the runner 0.2 s and
    the page 0.6 s more, waiting for the tick (`python -m bench.console`)."""
    if follower(ctx, session_id).refresh().status is not RunStatus.RUNNING:
        st.rerun()


@st.fragment(run_every=FINISHED_REFRESH_SECONDS)
def _watch_finished(ctx: Console, session_id: str) -> None:
    """`_watch` for a finished session, less often: only the inbox or the listing can change there."""
    _rerun_if_changed(ctx, session_id)


@_guarded
def _rerun_if_changed(ctx: Console, session_id: str) -> None:
    drawn = st.session_state.get(_DRAWN)
    if drawn is None or drawn[0] != session_id:
        return  # the panel has not been drawn for this session yet: its run comes first
    sessions = ctx.client.listing()
    fleet = drawn[2]
    state = follower(ctx, session_id).refresh()
    if (
        state.seq != drawn[1]
        or inbox_behind(sessions)
        or (fleet is not None and sessions != fleet)
        or _page_behind(session_id, state, sessions)
    ):
        st.rerun()


def _page_behind(session_id: str, state: SessionState, sessions: list[SessionInfo]) -> bool:
    """Whether this fragment's request carried the sidebar's pick or a URL the page is past: only the
    page's whole run writes the URL and follows the sidebar (see `ui.url`)."""
    return url_behind(session_id, state.tree) or picked_elsewhere([info.id for info in sessions])


def _panel(ctx: Console, view: SessionView, sessions: list[SessionInfo]) -> bool:
    """The session's panel drawn from `view` (one snapshot a tick); whether the All sessions tab, drawn
    from `sessions`, is open."""
    state = view.state
    if _page_behind(view.session_id, state, sessions):
        st.rerun()  # the whole page
    settle_results(view)
    render_controls(ctx, view)
    # The parts that come and go sit in slots that are always there (an empty one is not drawn), so
    # nothing after them moves to another place in the page between two redraws: a moved element
    # is drawn anew while the old one lingers until the redraw ends.
    with st.container(key="status_slot"):
        render_status(view)
    left, right = st.columns([3, 2], gap="medium")
    with right:
        # The approval heads the side column, beside the tree: an operator approves with the plan in
        # view (above the tree, the box pushed it below the fold at 1600×1000).
        with st.container(key="approval_slot"):
            render_approval(ctx, view)
        with st.container(key="review_slot"):
            render_plan_review(ctx, view)
        with st.container(key="node_slot"):
            node_id = render_node_picker(state)
            node = state.tree.get(node_id) if node_id else None
            render_node_actions(ctx, view, node)
    with left:
        aside = (lambda: render_live_page(view)) if shows_live_page(state) else None
        render_tree(view, aside)
    with right:
        node_tab, edit_tab, run_tab = st.tabs(["Node", EDIT_TAB, "Task & answer"], key=PANEL_KEY, bind="query-params")
        with node_tab:
            render_inspector(ctx, view, node_id)
        with edit_tab:
            render_node_edit(ctx, view, node)
        with run_tab:  # drawn only while open, like the tabs below: its screenshot cost every redraw 94 KiB
            if run_tab.open:
                render_verdict(ctx, view)
                render_run_panel(state)
    settings_tab, timeline_tab, changes_tab, sessions_tab = st.tabs(
        ["Run settings", "Timeline", "Plan changes", "All sessions"], key="tab", bind="query-params"
    )
    with settings_tab:
        render_settings(ctx, view)
    # Only the open one of these tabs is drawn (the tabs are bound to the URL, so Streamlit knows
    # which): the timeline's, the plan changes' and the sessions' tables cost every tick otherwise. The
    # settings are forms, whose typing lives only in the browser, so they are always drawn, like the
    # Edit plan tab.
    with timeline_tab:
        if timeline_tab.open:
            render_timeline(ctx, view)
    with changes_tab:
        if changes_tab.open:
            render_plan_changes(view, node_id)
    with sessions_tab:
        if sessions_tab.open:
            render_sessions(sessions, ctx.client.recent_actions(RATE_WINDOW))
    return bool(sessions_tab.open)
