"""The operator console: pick or start a session, watch the tree grow, stop it, fix it, resume.

The page reads snapshots folded from the session store and writes operator commands; runs happen
in the console's runner threads, so the page can be closed or reloaded at any time.
"""

from __future__ import annotations

import streamlit as st

from ui.context import console
from ui.text import md, short
from ui.views.export import render_exports
from ui.views.live import live
from ui.views.live_panel import render_live_panel
from ui.views.sidebar import render_sidebar

__all__ = ["main"]

HEADING_CHARS = 160
"""A task longer than this is cut in the heading and shown whole, as text, under "Whole task"."""


def main() -> None:
    st.set_page_config(page_title="AND/OR console", page_icon="🌳", layout="wide")
    ctx = console()
    session_id = render_sidebar(ctx)
    if session_id is None:
        st.markdown(
            "## AND/OR console\nStart a session from the sidebar: pick a demo task and press **Start session**."
        )
        return
    task = live(ctx, session_id).refresh().task
    st.markdown(f"### {md(short(task, HEADING_CHARS))}")
    if len(" ".join(task.split())) > HEADING_CHARS or "\n" in task.strip():
        with st.expander(f"Whole task ({len(task):,} characters)"):
            st.text(task)
    with st.expander("Export: trace, tree, report"):
        render_exports(ctx, session_id)
    render_live_panel(ctx, session_id)
