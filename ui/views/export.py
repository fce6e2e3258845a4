"""Downloads: the HTML report (one self-contained file), the trace JSON, the tree as DOT, SVG and
GraphML, and a Markdown report of the run: the files `python -m sessions report` writes.

The files are built when the exports are opened, again when the operator presses Refresh, and again
when the page is drawn after the session moved while it is not running (paused, waiting, finished):
such a page is drawn only when something changed, so a file downloaded after the run ended reaches
its end. The buttons serve those bytes, and say which event they reach. Built at click time instead
(a deferred download), a file lived only until the second run after it was made, and the live panel
runs every 0.75 s while the session runs: on a loaded machine the browser's fetch came later and the
download was cancelled. Bytes kept in the tab's state are registered again, under the same id, by
every run of the page, and fragment runs leave them alone, so a click always finds its file.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

import streamlit as st

from planner.events import Event
from planner.state import RunStatus, SessionState, replay
from sessions.client import SessionView
from sessions.client.export import markdown_report, trace_json, tree_dot, tree_svg
from sessions.client.report import html_report, tree_graphml
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


_PREPARED = "_exports"
"""Session state: (session id, the event the files reach, {extension: bytes}) for the session on screen."""


def _prepare(ctx: Console, session_id: str) -> None:
    """Build every file from the log as it is now (the Refresh button's callback, and the first open)."""
    events = ctx.client.events(session_id)
    state = replay(events)
    files = {}
    for _, extension, _, build in _FILES:
        if extension != "svg" or shutil.which("dot"):
            built = build(session_id, state, events)
            files[extension] = built.encode() if isinstance(built, str) else built
    st.session_state[_PREPARED] = (session_id, state.seq, files)


def render_exports(ctx: Console, view: SessionView) -> None:
    session_id, state = view.session_id, view.state
    prepared = st.session_state.get(_PREPARED)
    behind = prepared is not None and prepared[1] < state.seq and state.status is not RunStatus.RUNNING
    if prepared is None or prepared[0] != session_id or behind:
        _prepare(ctx, session_id)
    _, seq, files = st.session_state[_PREPARED]
    for column, (label, extension, mime, _) in zip(st.columns(len(_FILES)), _FILES):
        if extension not in files:
            column.caption("SVG export needs Graphviz's dot program: apt-get install graphviz")
            continue
        column.download_button(
            label, files[extension], f"{session_id}.{extension}", mime, on_click="ignore", key=f"export_{extension}"
        )
    st.button(
        f"Refresh: the files reach event {seq}",
        icon=":material/refresh:",
        key="export_refresh",
        on_click=_prepare,
        args=(ctx, session_id),
        help="Build the files again from the log as it is now.",
    )
