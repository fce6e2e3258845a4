"""The console's keyboard shortcuts, in one map: every button that has one reads its key here, and the
help popover is drawn from it, so the keys shown are always the keys bound.

Streamlit binds each key to its button (`shortcut=`): a key fires only while its button is on screen
and enabled, and a single key without Ctrl, Cmd or Alt never fires while the focus is in a text field,
a text area or a select box, so typing a reason never pauses or approves anything. Streamlit keeps
R (rerun) and C (clear caches) for itself, so Start/Resume is G (go). Stop has no key: it ends the
run for good, and a stray key must never do that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

import streamlit as st

__all__ = ["SHORTCUTS", "Shortcut", "ShortcutName", "render_help"]

ShortcutName = Literal["resume", "pause", "step", "approve", "reject", "previous_node", "next_node", "breakpoint"]


class Shortcut(NamedTuple):
    key: str
    """As `st.button(shortcut=)` takes it."""
    does: str
    """What pressing it does, as the help popover says it."""


SHORTCUTS: Final[Mapping[ShortcutName, Shortcut]] = {
    "resume": Shortcut("G", "Start or resume the run"),
    "pause": Shortcut("P", "Pause the run at the next step boundary"),
    "step": Shortcut("S", "Run one step, then pause"),
    "approve": Shortcut("A", "Approve the action awaiting approval"),
    "reject": Shortcut("X", "Reject that action (write the reason first)"),
    "previous_node": Shortcut("K", "Select the previous node (depth-first, as the node selector lists them)"),
    "next_node": Shortcut("J", "Select the next node"),
    "breakpoint": Shortcut("B", "Set or remove a breakpoint on the selected node (Break here)"),
}


def render_help() -> None:
    """A popover listing every key and what it does."""
    # "Keys", not "Shortcuts": in its column beside the run controls the longer word was cut at 1500 px.
    with st.popover("Keys", icon=":material/keyboard:", help="Keyboard shortcuts"):
        rows = "\n".join(f"| `{shortcut.key}` | {shortcut.does} |" for shortcut in SHORTCUTS.values())
        st.markdown(f"| Key | Does |\n| --- | --- |\n{rows}")
        st.caption("Keys do nothing while you type in a field: click outside it first. Stop has no key.")
