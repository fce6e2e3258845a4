"""The live AND/OR tree: click a node to select it; the selection survives every refresh."""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from planner.frames import active_path
from planner.state import SessionState
from planner.tree import Tree
from sessions.markdown import md, short
from ui.context import Console
from ui.shortcuts import SHORTCUTS
from ui.tree_chart import build_chart, clicked_node, legend_markdown
from ui.url import NODE_KEY, shown_node

__all__ = ["render_node_picker", "render_tree"]


def render_tree(ctx: Console, session_id: str, state: SessionState, failed: Collection[str] = ()) -> None:
    with st.container(horizontal=True, gap="medium"):  # the toggles wrap instead of cutting their labels
        st.toggle("Hide pruned/deleted", key="hide_removed")
        st.toggle("Focus on selection", key="focus_selected")
        st.toggle("Fold finished branches", value=True, key="collapse_closed")
        st.toggle(
            "Draw every node",
            value=st.query_params.get("all") == "1",
            key="draw_all",
            help="slower on big trees",
        )
    selected = st.session_state.get(NODE_KEY)
    chart = build_chart(
        state,
        selected=selected,
        hide_removed=st.session_state.get("hide_removed", False),
        focus=selected if st.session_state.get("focus_selected") and selected in state.tree else None,
        collapse_closed=st.session_state.get("collapse_closed", True) and not st.session_state.get("draw_all"),
        max_nodes=1_000_000 if st.session_state.get("draw_all") else 400,
        failed=failed,
    )
    key = f"tree_{session_id}"
    st.session_state[f"{key}_ids"] = chart.node_ids
    st.echarts_chart(
        chart.option,
        key=key,
        on_select=lambda: _pick(key),
        height=560,
        renderer=chart.renderer,
        alt=f"Plan tree of {len(state.tree)} nodes",
    )
    if chart.hidden:
        st.caption(
            f"{chart.hidden} of {len(state.tree)} nodes folded (+N marks where); use the node selector to reach any node"
        )
    with st.expander("Legend"):
        st.markdown(legend_markdown())


def _pick(key: str) -> None:
    """Map a click through the ids of the chart that was on screen; an edge click or a deselect keeps
    the current selection."""
    node_id = clicked_node(st.session_state.get(key), st.session_state.get(f"{key}_ids", []))
    if node_id is not None:
        st.session_state[NODE_KEY] = node_id


_PICKER_LIMIT = 800
"""Past this many nodes the selector lists the selection's neighbourhood, plus a jump-to-id box."""


def _jump(tree_ids: set[str]) -> None:
    wanted = st.session_state.get("jump_to", "").strip()
    if wanted in tree_ids:
        st.session_state[NODE_KEY] = wanted
        st.session_state["jump_error"] = None
    elif wanted:
        st.session_state["jump_error"] = f"there is no node {wanted!r}"


def _neighbourhood(state: SessionState, selected: str) -> list[str]:
    tree = state.tree
    node = tree[selected]
    keep = {selected, *node.children, *(a.id for a in tree.ancestors(node))}
    if node.parent is not None:
        keep.update(tree[node.parent].children)
    keep.update(n.id for n, _ in active_path(tree))
    return [n.id for n in tree.walk() if n.id in keep]


def render_node_picker(state: SessionState) -> str | None:
    """A searchable selector as well as clicking: type an id or a word of the description."""
    if not len(state.tree):
        return None
    selected = shown_node(state.tree)
    if len(state.tree) > _PICKER_LIMIT:
        st.text_input(
            "Go to node id", key="jump_to", on_change=_jump, args=(set(state.tree.nodes),), placeholder="e.g. 0.3.12"
        )
        if st.session_state.get("jump_error"):
            st.error(md(st.session_state["jump_error"]))
        ids = _neighbourhood(state, selected)
    else:
        ids = [node.id for node in state.tree.walk()]
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        st.selectbox(
            "Node",
            ids,
            key=NODE_KEY,
            format_func=lambda node_id: f"{node_id} · {short(state.tree[node_id].description, 60)}",
            help="Click a node in the tree, or search here by id or description",
        )
        for name, icon, by in (
            ("previous_node", ":material/keyboard_arrow_up:", -1),
            ("next_node", ":material/keyboard_arrow_down:", 1),
        ):
            shortcut = SHORTCUTS[name]
            st.button(
                "",
                icon=icon,
                key=name,
                help=shortcut.does,
                shortcut=shortcut.key,
                on_click=_move,
                args=(state.tree, by),
            )
    return st.session_state[NODE_KEY]


def _move(tree: Tree, by: int) -> None:
    """Select the node `by` places from the selection in depth-first order, the order the selector lists
    (its neighbourhood of a big tree keeps that order, and always holds the selection); the ends stay put.

    `tree` is the one on screen when the button was drawn: the follower folds new events into it in
    place, so it is never older than the selection."""
    order = [node.id for node in tree.walk()]
    index = order.index(shown_node(tree)) + by
    st.session_state[NODE_KEY] = order[min(max(index, 0), len(order) - 1)]
