"""Every change to the plan, in order: the operator's edits and the engine's re-expansions and
repairs, each with who made it, its event number and what it did node by node (added, removed and
changed nodes, before → after), so a run can be reviewed edit by edit.

The changes come with the redraw's view (`sessions.client.SessionView`), found while the log is folded,
so a redraw every 0.75 s costs nothing for the log's old events. A change's button selects the node it
was made at.
"""

from __future__ import annotations

import streamlit as st

from planner.diff import EditDiff
from sessions.client import SessionView
from sessions.client.markdown import md_line
from ui.diff_lines import diff_lines, made_by
from ui.url import select

__all__ = ["render_plan_changes"]


def render_plan_changes(view: SessionView, selected: str | None) -> None:
    """The changes oldest first; with the toggle, only those that touched the selected node's subtree."""
    state = view.state
    changes = view.plan_changes
    if not changes:
        st.caption(
            "No change to the plan yet: the operator's edits and the engine's re-expansions and repairs show here."
        )
        return
    under = selected is not None and st.toggle(
        f"Only changes under the selected node ({md_line(selected)})", key="plan_changes_under"
    )
    shown = [diff for diff in changes if not under or _touches(diff, selected or "")]
    st.caption(f"{len(shown)} of {len(changes)} changes to the plan, oldest first")
    for diff in shown:
        with st.container(border=True, key=f"plan_change_{diff.seq}"):
            with st.container(horizontal=True, vertical_alignment="center", gap="xsmall"):
                st.markdown(f"**Event {diff.seq}** · {md_line(made_by(diff))}", width="content")
                if diff.node is not None and diff.node in state.tree:
                    st.button(
                        f"Select {md_line(diff.node)}",
                        key=f"plan_change_select_{diff.seq}",
                        type="tertiary",
                        on_click=select,
                        args=(diff.node,),
                    )
            lines = diff_lines(diff)
            st.markdown("  \n".join(md_line(line) for line in lines) if lines else "No node changed.")


def _touches(diff: EditDiff, node_id: str) -> bool:
    """Whether the change was made at `node_id` or below it, or moved a node there."""
    ids = [diff.node or "", *(change.id for change in (*diff.added, *diff.removed, *diff.changed))]
    return any(i == node_id or i.startswith(f"{node_id}.") for i in ids)
