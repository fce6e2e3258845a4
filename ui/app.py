"""The operator console: pick or start a session, watch the tree grow, stop it, fix it, resume.

The page reads snapshots folded from the session store and writes operator commands; runs happen
in the console's runner threads, so the page can be closed or reloaded at any time.
"""

from __future__ import annotations

import streamlit as st

from ui.context import console
from ui.text import md
from ui.views.live import live
from ui.views.live_panel import render_live_panel
from ui.views.sidebar import render_sidebar

__all__ = ["main"]


def main() -> None:
    st.set_page_config(page_title="AND/OR console", page_icon="🌳", layout="wide")
    ctx = console()
    session_id = render_sidebar(ctx)
    if session_id is None:
        st.markdown(
            "## AND/OR console\nStart a session from the sidebar: pick a demo task and press **Start session**."
        )
        return
    state = live(ctx, session_id).refresh()
    st.markdown(f"### {md(state.task)}")
    render_live_panel(ctx, session_id)
