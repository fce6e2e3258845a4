"""This tab's followers of session logs, and the one snapshot (`SessionView`) each redraw draws from.

A tab never shares a follower with another tab (a follower folds the log incrementally, and two tabs
may be at different moments); the client's reads under it are shared (`sessions.store.feed`)."""

from __future__ import annotations

import streamlit as st

from sessions.client import Follower, SessionView
from ui.context import Console

__all__ = ["follower", "watch"]


def follower(ctx: Console, session_id: str) -> Follower:
    """This tab's follower of the session's log."""
    followers: dict[str, Follower] = st.session_state.setdefault("_live", {})
    if session_id not in followers:
        followers[session_id] = ctx.client.follow(session_id)
    return followers[session_id]


def watch(ctx: Console, session_id: str) -> SessionView:
    """The session now, for one redraw: every part of the page draws from this one view."""
    return follower(ctx, session_id).watch()
