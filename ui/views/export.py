"""Downloads: the HTML report (one self-contained file), the trace JSON, the tree as DOT, SVG and
GraphML, and a Markdown report of the run: the files `python -m sessions report` writes.

Each file is built only when its button is clicked (Streamlit calls the function then), so a page
refresh never pays for exports nobody asked for. The buttons are drawn outside the live fragment, on
purpose: Streamlit gives a deferred download a new id on every redraw and drops the old one once the
redraw ends, so a button inside a panel redrawn every 0.75 s answered a click with "Failed to
generate file for download" (or a 404 for the file) whenever a redraw came between drawing and
click. Drawn with the page, the id stays valid until the operator changes the page, and the callable
still reads the log at click time, so a download during a run has everything up to the click.
"""

from __future__ import annotations

import shutil

import streamlit as st

from planner.state import SessionState
from sessions.export import markdown_report, trace_json, tree_dot, tree_svg
from sessions.report import html_report, tree_graphml
from sessions.runner import load_state
from ui.context import Console

__all__ = ["render_exports"]


def render_exports(ctx: Console, session_id: str) -> None:
    def current() -> SessionState:
        """Rebuilt from the log: the callback runs on its own thread, away from the page's state."""
        return load_state(ctx.store, session_id)

    cols = st.columns(6)
    cols[1].download_button(
        "Trace JSON",
        lambda: trace_json(session_id, current(), ctx.store.load(session_id)),
        f"{session_id}.json",
        "application/json",
        on_click="ignore",
        key="export_json",
    )
    cols[2].download_button(
        "Tree (DOT)",
        lambda: tree_dot(current()),
        f"{session_id}.dot",
        "text/vnd.graphviz",
        on_click="ignore",
        key="export_dot",
    )
    if shutil.which("dot"):
        cols[3].download_button(
            "Tree (SVG)",
            lambda: tree_svg(current()),
            f"{session_id}.svg",
            "image/svg+xml",
            on_click="ignore",
            key="export_svg",
        )
    else:
        cols[3].caption("SVG export needs Graphviz's dot program: apt-get install graphviz")
    cols[0].download_button(
        "Report (HTML)",
        lambda: html_report(session_id, current(), ctx.store.load(session_id)),
        f"{session_id}.html",
        "text/html",
        on_click="ignore",
        key="export_html",
    )
    cols[5].download_button(
        "Tree (GraphML)",
        lambda: tree_graphml(session_id, current(), ctx.store.load(session_id)),
        f"{session_id}.graphml",
        "application/graphml+xml",
        on_click="ignore",
        key="export_graphml",
    )
    cols[4].download_button(
        "Report (Markdown)",
        lambda: markdown_report(session_id, current(), ctx.store.load(session_id)),
        f"{session_id}.md",
        "text/markdown",
        on_click="ignore",
        key="export_md",
    )
