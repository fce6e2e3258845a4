"""The attention inbox: every session that needs the operator, in the sidebar above the session picker.

Each item (`sessions.client.attention` decides which, in what order, and why) is a button that opens its
session the way the picker does; the page's title counts them and the browser notifies each new one.

The inbox is drawn by the page's whole run only, and stays current without a second timer (several
timed fragments on one page can freeze it): whatever fragment already redraws the page on a timer
(on a session's page, the live panel) checks the store's listing against the inbox this page last
drew (`inbox_behind`) and asks for a whole run when they differ. A page with no session on it has
no such fragment, so the inbox brings its own (`render_inbox`'s `timed`), which only reads the
listing and draws nothing. The whole run draws the inbox before the live panel, so the panel checks
against this run's inbox (docs/architecture.md, "ui/views/inbox.py").
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from sessions.client import SessionInfo
from sessions.client.attention import Attention, Need, needing_attention
from sessions.client.markdown import md_line, short
from ui.context import Console
from ui.url import open_session

__all__ = ["REFRESH_SECONDS", "SHOWN", "inbox_behind", "page_title", "render_inbox"]

REFRESH_SECONDS = 3.0
"""How often the inbox reads the store itself, on a page that has no other timer."""
SHOWN = 5
"""Items drawn at most; the rest are counted (the title counts them all)."""

_DRAWN = "_inbox"
"""Session-state key: the items this tab's inbox last drew."""
_ICONS = {
    Need.APPROVAL: ":material/front_hand:",
    Need.ERROR: ":material/error:",
    Need.FAILED: ":material/cancel:",
    Need.ANSWER: ":material/rule:",
    Need.BREAKPOINT: ":material/pause_circle:",
}
_HEADLINES = {
    Need.APPROVAL: "Approval needed",
    Need.ERROR: "Session paused by a problem",
    Need.FAILED: "Session failed",
    Need.ANSWER: "Answer check not met",
    Need.BREAKPOINT: "Breakpoint reached",
}
_ASSETS = Path(__file__).resolve().parent.parent / "assets"
_notify = st.components.v2.component(
    "andor_inbox_notify",
    js=(_ASSETS / "inbox_notify.js").read_text(),
    css=(_ASSETS / "inbox_notify.css").read_text(),
)


def page_title(title: str, count: int) -> str:
    """The browser tab's title: how many sessions need the operator, then `title`."""
    return f"({count}) {title}" if count else title


def inbox_behind(sessions: list[SessionInfo]) -> bool:
    """Whether `sessions` (the store's listing, read just now) need the operator otherwise than this
    tab's inbox last showed."""
    return tuple(needing_attention(sessions)) != st.session_state.get(_DRAWN)


def render_inbox(ctx: Console, sessions: list[SessionInfo], title: str, *, timed: bool) -> None:
    """Draw the inbox of `sessions` (the listing the page's run read) where the caller is (the sidebar)
    and set the page's title; `timed` when nothing else on the page redraws on a timer, so the inbox
    watches the store itself (see the module docstring)."""
    items = needing_attention(sessions)
    st.session_state[_DRAWN] = tuple(items)
    st.set_page_config(page_title=page_title(title, len(items)))
    with st.container(key="inbox", gap="small"):
        st.markdown(f"**Needs you ({len(items)})**" if items else "**Needs you**")
        for item in items[:SHOWN]:
            st.button(
                f"{md_line(short(item.task, 40))} · {md_line(item.why)}",
                key=f"inbox_{item.session_id}",
                icon=_ICONS[item.need],
                help=f"Open session {md_line(item.session_id)}",
                width="stretch",
                on_click=open_session,  # a callback: the sidebar, drawn after it, shows the session
                args=(item.session_id,),
            )
        if len(items) > SHOWN:
            st.caption(f"and {len(items) - SHOWN} more: see All sessions")
        elif not items:
            st.caption("Nothing waits for you.")
        _notify(key="inbox_notify", data={"items": [_notice(item) for item in items]})
    if timed:
        _watch(ctx)


@st.fragment(run_every=REFRESH_SECONDS)
def _watch(ctx: Console) -> None:
    """Draws nothing: a whole run redraws the inbox once the store says it is behind."""
    if inbox_behind(ctx.client.listing()):
        st.rerun()


def _notice(item: Attention) -> dict[str, str]:
    """What the browser shows for one item: plain strings, which the component never reads as markup."""
    return {"id": item.key, "title": _HEADLINES[item.need], "body": f"{short(item.task, 80)}\n{item.why}"}
