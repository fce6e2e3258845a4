"""Long text is shown cut, with the whole of it one click away: a 10,000-character task or description
must not push the controls and forms thousands of pixels down."""

from __future__ import annotations

import streamlit as st

from sessions.client.markdown import md_line, short

__all__ = ["show_line", "show_text", "show_whole"]

_LINES = 12
"""Lines of a text block shown before it is cut (a short text of many lines is as tall as a long one)."""


def show_whole(text: str, shown: str, what: str) -> None:
    """Under `shown`, a cut of `text` drawn by the caller (in a heading, say): an expander with the whole
    `text`, as text, when the cut lost any word (joining its lines and spaces loses none)."""
    if shown not in (text, " ".join(text.split())):
        with st.expander(f"Whole {what} ({len(text):,} characters)"):
            st.text(text)


def show_text(text: str, limit: int, what: str) -> None:
    """`text` as text, line breaks kept, cut to `limit` characters and a dozen lines, with the whole of
    it under an expander when cut."""
    cut = "\n".join(text.splitlines()[:_LINES])[:limit]
    if cut == text:
        st.text(text)
        return
    st.text(cut.rstrip() + " …")
    show_whole(text, cut, what)


def show_line(label: str, text: str, limit: int, what: str) -> None:
    """`label` (Markdown the caller wrote) and `text` (untrusted) on one line, cut to `limit`
    characters, with the whole of it under an expander when cut."""
    cut = short(text, limit)
    st.markdown(f"{label}{md_line(cut)}")
    show_whole(text, cut, what)
