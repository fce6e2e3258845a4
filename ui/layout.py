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

from pathlib import Path

import streamlit as st

__all__ = [
    "APPROVAL_ACTION",
    "APPROVAL_BOX",
    "APPROVAL_NO_PICTURE",
    "APPROVAL_PICTURE",
    "INBOX_ROW",
    "RULES_PROBE",
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
"""The keys of the approval box, its held action's code block, and its picture or the line saying there
is none, (`ui.views.edit.render_approval`)."""
_APPROVAL_LAST = "reject_pause_submit"
"""The key of the approval box's last element: once it is on the page, the rest of the box is."""
_RULES = "page_rules"
"""The key of the container that holds the rules; the rules hide it, which is how the page knows."""
RULES_PROBE = "page_rules_probe"
"""The key of the component carrying the rules: its state says whether this tab reported them in force
(an AppTest, which has no browser, stands in for it by setting `{"in_force": True}` under this key)."""


def _rules() -> str:
    """The approval box is hidden until it is whole: a run sends the box's elements one by one and the
    browser draws each as it comes, and a code block draws its text only once its highlighter has
    loaded, an image its `img` once it has been placed. So the box shows only once its last button, the
    action's text and its picture (or the line saying there is none) are there. And each inbox item
    keeps to one line (`_INBOX_ROWS`)."""
    box = f".st-key-{APPROVAL_BOX}"
    picture = f":not(:has(.st-key-{APPROVAL_PICTURE} img)):not(:has(.st-key-{APPROVAL_NO_PICTURE}))"
    return (
        f"{box}:not(:has(.st-key-{_APPROVAL_LAST})), {box}:not(:has(.st-key-{APPROVAL_ACTION} pre)), "
        f"{box}{picture} {{ visibility: hidden; }} .st-key-{_RULES} {{ display: none; }}\n"  # a newline: Streamlit
        + _INBOX_ROWS  # reads a one-line string with `*` or `[` in it as a file's name
        + _MARGINS
    )


_MARGINS = (
    '\n[data-testid="stMainBlockContainer"] { padding: 2.5rem 1.5rem 4rem; }'
    f"\n@media (max-height: 850px) {{ .st-key-{APPROVAL_PICTURE} img {{ max-height: 10.5rem; object-fit: contain; }} }}"
)
"""Streamlit's wide layout keeps 6rem above the page and 5rem beside it: at 1280×800 the tree began
below the fold (the page's title clears Streamlit's toolbar at 2.5rem). On a short screen the approval
picture is lower, so that the box's Approve button is on screen beside the tree."""


INBOX_ROW = "inbox_row_"
"""The key prefix of an inbox item's row (`ui.views.inbox`)."""
_INBOX_ROWS = (
    f'[class*="st-key-{INBOX_ROW}"] button, [class*="st-key-{INBOX_ROW}"] button * '
    "{ min-width: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }"
)
"""Each inbox item on one line, cut with an ellipsis (its help and its session say the rest): a button's
label wraps in Streamlit, and eight items of three to seven lines pushed the sidebar's forms down."""


_carrier = st.components.v2.component(
    "andor_page_rules",
    css=_rules(),
    js=(Path(__file__).resolve().parent / "assets" / "page_rules.js").read_text(),
    isolate_styles=False,  # the rules style the page, not a shadow root
)


def draw_page_rules() -> None:
    """The console's own CSS, drawn first in every run of the page, so it is in force long before what
    it styles arrives. On a fresh page it is not: the browser puts a stylesheet in place some frames
    (hundreds of milliseconds on a cold page) after the elements drawn beside it, so the tab reports
    when the rules are in force (`ui/assets/page_rules.js`), and that report runs the page again."""
    known = rules_in_place()
    with st.container(key=_RULES):
        _carrier(
            key=RULES_PROBE,
            data={"container": _RULES, "known": known},
            default={"in_force": False},
            on_in_force_change=_noop,
        )


def _noop() -> None:
    """Streamlit keeps a component's state value only when it has a callback; the report needs none."""


def rules_in_place() -> bool:
    """Whether this tab has reported the page rules in force: what they must hide is drawn only then."""
    reported = st.session_state.get(RULES_PROBE)
    return bool(reported and reported.get("in_force"))
