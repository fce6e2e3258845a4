"""The operator console: pick or start a session, watch the tree grow, stop it, fix it, resume.

The page reads snapshots folded from the session store and writes operator commands; runs happen
in the console's runner threads, so the page can be closed or reloaded at any time.
"""

from __future__ import annotations

import streamlit as st

from sessions.client.markdown import md, md_line, short
from ui.access import Operator, admit, show_operator
from ui.context import console, database_trouble
from ui.layout import draw_page_rules
from ui.run_ends import deliver_lost_run_ends
from ui.url import missing_session, read_url, write_url
from ui.views.export import render_exports
from ui.views.inbox import render_inbox
from ui.views.live import watch
from ui.views.live_panel import render_live_panel
from ui.views.sidebar import render_sidebar
from ui.views.whole import show_whole

__all__ = ["main"]

TITLE = "AND/OR console"
"""The browser tab's title; the attention inbox puts its count before it."""
HEADING_CHARS = 160
"""A task longer than this is cut in the heading and shown whole, as text, under "Whole task"."""


def main() -> None:
    deliver_lost_run_ends()  # before the first run ends: see `ui.run_ends`
    st.set_page_config(page_title=TITLE, page_icon="🌳", layout="wide")
    operator = admit()
    if operator is None:
        return  # the page is the one sentence saying why this request is not served
    draw_page_rules()  # before anything it styles; admission draws nothing when it admits
    with database_trouble():
        _page(operator)


def _page(operator: Operator) -> None:
    ctx = console()
    read_url()
    session_id, sessions, inbox = render_sidebar(ctx)
    show_operator(operator)
    if session_id is None:
        with inbox:
            render_inbox(ctx, sessions, TITLE, timed=True)
        st.markdown(
            "## AND/OR console\nStart a session from the sidebar: pick a demo task and press **Start session**."
        )
        return
    if (missing := missing_session()) is not None:
        st.warning(
            f"The link names session {md_line(missing, 80)}, which this store does not have; this is the newest."
        )
    view = watch(ctx, session_id)
    state = view.state
    with inbox:  # one timer per page: the live panel's keeps the inbox current (`ui.views.live_panel`)
        render_inbox(ctx, sessions, TITLE, timed=False)
    write_url(session_id, state.tree)
    task = state.task
    heading = short(task, HEADING_CHARS)
    st.markdown(f"### {md(heading)}")
    show_whole(task, heading, "task")
    # Open or closed is kept on the server (the key), so a redraw that rebuilds the page never folds
    # the exports away under the operator's click, and a closed one registers no downloads.
    with st.expander("Export: trace, tree, report", key="exports", on_change="rerun") as exports:
        if exports.open:
            render_exports(ctx, view)
    render_live_panel(ctx, view)
