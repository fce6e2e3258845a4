"""The attention inbox: every session that needs the operator, in the sidebar above the session picker.

Each item (`sessions.client.attention` decides which, in what order, and why) is a one-line button that
opens its session the way the picker does and counts as seen; ✕ dismisses it, for this operator, until
the session needs them for something else. The page's title counts the new items and the browser
notifies each new one.

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
from sessions.client.attention import Attention, InboxItem, Mark, Need, needing_attention
from sessions.client.markdown import md_line, short
from ui.access import current
from ui.context import Console
from ui.layout import INBOX_ROW
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
    """Draw this operator's inbox of `sessions` (the listing the page's run read) where the caller is
    (the sidebar), one line per item, and set the page's title to the count of new ones; `timed` when
    nothing else on the page redraws on a timer, so the inbox watches the store itself (see the module
    docstring)."""
    needs = needing_attention(sessions)
    st.session_state[_DRAWN] = tuple(needs)
    items = ctx.client.inbox(_operator(), needs)
    new = [item for item in items if not item.seen]
    st.set_page_config(page_title=page_title(title, len(new)))
    with st.container(key="inbox", gap="small"):
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f"**Needs you ({len(new)} new)**" if new else "**Needs you**")
            if new:
                keys = [item.attention.key for item in new]
                st.button("Mark all seen", key="inbox_all_seen", type="tertiary", on_click=_mark, args=(ctx, keys))
        for item in items[:SHOWN]:
            _row(ctx, item)
        if len(items) > SHOWN:
            st.caption(f"and {len(items) - SHOWN} more: see All sessions")
        elif not items:
            st.caption("Nothing waits for you.")
        _notify(key="inbox_notify", data={"items": [_notice(item.attention) for item in new]})
    if timed:
        _watch(ctx)


def _row(ctx: Console, item: InboxItem) -> None:
    """One line: the item (new ones marked ●), which opens its session and counts as seen, and ✕, which
    takes it off this operator's inbox until the session needs them for something else. The item has
    no tooltip: one hung over the row below and took the click meant for it."""
    need = item.attention
    with st.container(key=f"{INBOX_ROW}{need.session_id}"):
        item_column, dismiss_column = st.columns([6, 1], gap="small", vertical_alignment="center")
        item_column.button(
            f"{'' if item.seen else '● '}{md_line(short(need.task, 40))} · {md_line(need.why)}",
            key=f"inbox_{need.session_id}",
            icon=_ICONS[need.need],
            width="stretch",
            type="tertiary" if item.seen else "secondary",
            on_click=_open,  # a callback: the sidebar, drawn after it, shows the session
            args=(ctx, need),
        )
        dismiss_column.button(
            ":material/close:",
            key=f"inbox_dismiss_{need.session_id}",
            type="tertiary",
            help="Dismiss",
            on_click=_mark,
            args=(ctx, [need.key], Mark.DISMISSED),
        )


def _open(ctx: Console, need: Attention) -> None:
    _mark(ctx, [need.key])
    open_session(need.session_id)


def _mark(ctx: Console, keys: list[str], mark: Mark = Mark.SEEN) -> None:
    """Record `mark` on the items `keys` for the operator pressing (a press's callback)."""
    operator = _operator()
    for key in keys:
        ctx.client.mark(operator, key, mark)


def _operator() -> str:
    """Whose marks these are: the operator's name; an unnamed one (a console on loopback with no login)
    shares one inbox with every other unnamed one."""
    return current().name or ""


@st.fragment(run_every=REFRESH_SECONDS)
def _watch(ctx: Console) -> None:
    """Draws nothing: a whole run redraws the inbox once the store says it is behind."""
    if inbox_behind(ctx.client.listing()):
        st.rerun()


def _notice(item: Attention) -> dict[str, str]:
    """What the browser shows for one item: plain strings, which the component never reads as markup."""
    return {"id": item.key, "title": _HEADLINES[item.need], "body": f"{short(item.task, 80)}\n{item.why}"}
