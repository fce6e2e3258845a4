"""The one place the console leans on how Streamlit lays a page out in the browser, which is not public.

A keyed element is public: Streamlit gives it the class `st-key-KEY`, and `page_rules` needs no more
than that (and that a code block draws a `pre`). A keyed container's place in a column is not public:
each block of a column sits in a wrapper (`data-testid="stLayoutWrapper"`), and the wrapper is the
flex item whose `order` moves it. Streamlit has no public way to draw a block first without drawing
it elsewhere (which left stale copies on screen), so this module names the wrapper, and
`tests/test_console_node_actions.py` pins the rule while `tests/test_console_node_actions_e2e.py`
checks in Chromium that the opened form really comes first.
"""

from __future__ import annotations

import streamlit as st

__all__ = [
    "APPROVAL_ACTION",
    "APPROVAL_BOX",
    "APPROVAL_NO_PICTURE",
    "APPROVAL_PICTURE",
    "draw_page_rules",
    "first_in_column",
    "rules_in_place",
]


def first_in_column(key: str) -> str:
    """A CSS rule that shows the keyed container `key` above its siblings in its column."""
    return f'[data-testid="stLayoutWrapper"]:has(> .st-key-{key}) {{ order: -1; }}'


APPROVAL_BOX = "approval_box"
APPROVAL_ACTION = "approval_code"
APPROVAL_PICTURE = "approval_picture"
APPROVAL_NO_PICTURE = "approval_no_picture"
_RULES = "page_rules"
_SENT = "_page_rules_sent"
_IN_PLACE = "_page_rules_in_place"
"""The keys of the approval box, its held action's code block, and its picture or the line saying there
is none, (`ui.views.edit.render_approval`)."""
_APPROVAL_LAST = "reject_pause_submit"
"""The key of the approval box's last element: once it is on the page, the rest of the box is."""


def draw_page_rules() -> None:
    """The console's own CSS, drawn first in every run of the page, so it is in force long before what
    it styles arrives (the browser puts a style element in place a few frames after it arrives).

    The approval box is hidden until it is whole: a run sends the box's elements one by one and the
    browser draws each as it comes, and a code block draws its text only once its highlighter has
    loaded, an image its `img` once it has been placed. So the box shows only once its last button, the
    action's text and its picture (or the line saying there is none) are there."""
    box = f".st-key-{APPROVAL_BOX}"
    picture = f":not(:has(.st-key-{APPROVAL_PICTURE} img)):not(:has(.st-key-{APPROVAL_NO_PICTURE}))"
    rules = (
        f"{box}:not(:has(.st-key-{_APPROVAL_LAST})), {box}:not(:has(.st-key-{APPROVAL_ACTION} pre)), "
        f"{box}{picture} {{ visibility: hidden; }} .st-key-{_RULES} {{ display: none; }}"
    )
    st.session_state[_IN_PLACE] = _RULES in st.session_state.get(_SENT, ())  # sent by an earlier run
    with st.container(key=_RULES):  # Markdown: `st.html` puts its style in place later still
        st.markdown(f"<style>{rules}</style>", unsafe_allow_html=True)
    st.session_state[_SENT] = (_RULES,)


def rules_in_place() -> bool:
    """Whether this tab's page had the rules before this run: on a fresh page the style element comes a
    few frames after the elements drawn in the same run, so what needs it waits for the next run."""
    return bool(st.session_state.get(_IN_PLACE))
