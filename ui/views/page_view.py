"""The live page: the newest browser screenshot beside the tree, the action and page it shows, and when.

An operator watching a run sees the plan and the page together without opening a tab. The image is
an element of its own that depends only on the screenshot file, so a redraw between actions leaves
the `<img>` as it is; only the age, a separate line of text, changes. A page whose session is not
running is not redrawn on a timer (`ui.views.live_panel`), so there the screenshot says the time it
was taken instead of an age that would stand still.
"""

from __future__ import annotations

import base64
import functools
import io
import mimetypes
import time
from itertools import chain
from pathlib import Path
from typing import cast

import streamlit as st
from PIL import Image

from planner.browser.dry import is_dry
from planner.events import ActionExecuted, Event
from planner.state import RunStatus, SessionState
from sessions.client import SessionView
from sessions.client.markdown import md_line

__all__ = ["LIVE_PAGE_ALT", "render_live_page", "screenshot_url", "shows_live_page", "thumbnail_url"]

LIVE_PAGE_ALT = "live page: the browser after the latest action"
"""The live screenshot's alternative text (what a screen reader, or a test, finds it by)."""
_THUMB_COLUMNS = (1, 1)
"""Screenshot and text side by side: in a 1600 px window, beside the tree's toggles, the screenshot is
about 110 px wide; its full-screen button enlarges it."""
_HEIGHT = 104
"""Pixels: the height of the tree's toggles beside it, in two rows; longer text scrolls inside."""
_SHOWN_CHARS = 70
"""An action longer than this is cut beside the screenshot; the URL is the caption's help, and the
inspector has both whole."""


_THUMB_WIDTH = 640
"""Pixels: the live page's copy of a screenshot is this wide at most. It is drawn about 110 px wide, and
a running session's page is redrawn every 0.75 s, each time with the image (the console sends no
message by reference, `.streamlit/config.toml`): the full screenshot was 94 KiB of each redraw."""


@functools.lru_cache(maxsize=32)
def thumbnail_url(path: str) -> str:
    """The screenshot at most `_THUMB_WIDTH` wide, as a JPEG data URL (see `screenshot_url`), built once
    per file; the full-screen view shows this copy, the inspector the whole screenshot."""
    with Image.open(path) as image:
        image.thumbnail((_THUMB_WIDTH, _THUMB_WIDTH * 4))
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=70)
    return _data_url("image/jpeg", buffer.getvalue())


@functools.lru_cache(maxsize=32)
def screenshot_url(path: str) -> str:
    """The screenshot inline, as a data URL. A file path or bytes would be served from Streamlit's
    media store under `/media/...`, which forgets a file as soon as a redraw of the live panel stops
    showing it, so the browser's fetch of the image the previous redraw showed could answer 404 while
    a run goes on. A data URL travels with the page, and a screenshot file never changes once written,
    so its URL is built once."""
    return _data_url(mimetypes.guess_type(path)[0] or "image/png", Path(path).read_bytes())


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min ago"


def _shot_event(view: SessionView) -> Event | None:
    """The action event that took the session's latest screenshot.

    Looked up once per screenshot: among the view's recent events first, and through every
    event of the session only when more than its window of events came since (a first drawing).
    """
    path = view.state.last_screenshot
    if path is None:
        return None
    found: dict[str, tuple[str, Event | None]] = st.session_state.setdefault("_live_page_event", {})
    cached = found.get(view.session_id)
    if cached is not None and cached[0] == path:
        return cached[1]
    events = chain(reversed(view.recent), chain.from_iterable(map(reversed, view.by_node.values())))
    event = next(
        (e for e in events if isinstance(e.payload, ActionExecuted) and e.payload.screenshot == path),
        None,
    )
    found[view.session_id] = (path, event)
    return event


def shows_live_page(state: SessionState) -> bool:
    """Whether the session has a live page: it can still change, and it runs a browser."""
    return not state.finished and not is_dry(state.start_url)


def _taken(at: float, running: bool) -> str:
    """When the screenshot was taken: its age while the page redraws on a timer, else the time of day."""
    return _ago(time.time() - at) if running else f"taken at {time.strftime('%H:%M:%S', time.localtime(at))}"


def render_live_page(view: SessionView) -> None:
    """The newest screenshot, the action that took it, its page and when it was taken
    (`shows_live_page` says when there is one)."""
    state = view.state
    event = _shot_event(view)
    path = state.last_screenshot
    # A fixed height: the age and the action change with every redraw, and the tree under the strip
    # must not move while the operator aims at a node.
    with st.container(key="live_page", height=_HEIGHT, border=False):
        if event is None or path is None or not Path(path).is_file():
            st.caption(
                "**Live page** · no screenshot yet: one is taken after each browser action.",
                help=md_line(f"Page: {state.url or 'none yet'}", _SHOWN_CHARS),
            )
            return
        run = cast(ActionExecuted, event.payload)
        shot, words = st.columns(_THUMB_COLUMNS, gap="small")
        with shot:
            st.image(thumbnail_url(path), alt=LIVE_PAGE_ALT)
        with words:
            outcome = "" if run.ok else f", which failed: {run.error or 'no reason given'}"
            st.caption(
                f"**Live page** · {_taken(event.at, state.status is RunStatus.RUNNING)}  \n"
                + md_line(f"after {run.action} at {event.node_id}{outcome}", _SHOWN_CHARS),
                help=md_line(run.url or "", _SHOWN_CHARS),
            )
