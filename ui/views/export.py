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
from collections.abc import Callable

import streamlit as st

from planner.events import Event
from planner.state import SessionState, replay
from sessions.export import markdown_report, trace_json, tree_dot, tree_svg
from sessions.report import html_report, tree_graphml
from ui.context import Console

__all__ = ["render_exports"]


_Build = Callable[[str, SessionState, list[Event]], str | bytes]

_FILES: tuple[tuple[str, str, str, _Build], ...] = (
    ("Report (HTML)", "html", "text/html", html_report),
    ("Trace JSON", "json", "application/json", trace_json),
    ("Tree (DOT)", "dot", "text/vnd.graphviz", lambda _, state, __: tree_dot(state)),
    ("Tree (SVG)", "svg", "image/svg+xml", lambda _, state, __: tree_svg(state)),
    ("Report (Markdown)", "md", "text/markdown", markdown_report),
    ("Tree (GraphML)", "graphml", "application/graphml+xml", tree_graphml),
)
"""Each download: its label, extension, MIME type and builder (the session id, its state and events)."""


def render_exports(ctx: Console, session_id: str) -> None:
    def builder(build: _Build) -> Callable[[], str | bytes]:
        def current() -> str | bytes:
            """Rebuilt from the log at click time: the callback runs on its own thread, away from the page's state."""
            events = ctx.store.load(session_id)
            return build(session_id, replay(events), events)

        return current

    for column, (label, extension, mime, build) in zip(st.columns(len(_FILES)), _FILES):
        if extension == "svg" and not shutil.which("dot"):
            column.caption("SVG export needs Graphviz's dot program: apt-get install graphviz")
            continue
        column.download_button(
            label,
            builder(build),
            f"{session_id}.{extension}",
            mime,
            on_click="ignore",
            key=f"export_{extension}",
        )
