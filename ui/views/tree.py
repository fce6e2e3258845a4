"""The live AND/OR tree: click a node to select it; the selection survives every refresh."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from planner.frames import active_path
from planner.state import SessionState
from sessions.client import SessionView
from sessions.client.markdown import md, short
from ui.shortcuts import SHORTCUTS, ShortcutName
from ui.tree_chart import build_chart, clicked_node, legend_markdown
from ui.url import NODE_KEY, follow_agent, follow_key, following, picker_key, select, selected_node, shown_node

__all__ = ["render_node_picker", "render_tree"]

_HEIGHT = 560
"""Pixels: the live tree's chart, fixed, so nothing below it moves as the plan grows."""
_VIEW_TOGGLES = (
    ("Hide pruned/deleted", "hide_removed", None),
    ("Focus on selection", "focus_selected", None),
    ("Fold finished branches", "collapse_closed", None),
    ("Draw every node", "draw_all", "slower on big trees"),
)
"""The tree view's toggles under its button: label, key and help."""


def _view_defaults() -> dict[str, bool]:
    """Each view toggle's value until the operator moves it: finished branches folded, and every node
    drawn when the link says so (`all=1`)."""
    return {
        "hide_removed": False,
        "focus_selected": False,
        "collapse_closed": True,
        "draw_all": st.query_params.get("all") == "1",
    }


def render_tree(view: SessionView, aside: Callable[[], None] | None = None) -> None:
    """The toggles, then the chart. `aside` draws next to the toggles (the live page): there it takes
    room from nothing else, where above the node's forms it pushed them below the fold."""
    session_id, state = view.session_id, view.state
    toggles, beside = st.columns([3, 2], gap="small") if aside is not None else (st.container(), None)
    with toggles, st.container(horizontal=True, gap="medium", vertical_alignment="center"):
        follow = _follow_toggle()
        # The other toggles fold into one button, which says how many differ from their defaults: side
        # by side they took five rows at 1280×800 and pushed the tree below the fold.
        defaults = _view_defaults()
        changed = sum(st.session_state.get(key, on) != on for key, on in defaults.items())
        with st.popover(f"Tree view · {changed} set" if changed else "Tree view", key="tree_view"):
            shown = {key: st.toggle(label, value=defaults[key], key=key, help=why) for label, key, why in _VIEW_TOGGLES}
    if beside is not None and aside is not None:
        with beside:
            aside()
    selected = selected_node()
    chart = build_chart(
        state,
        selected=selected,
        hide_removed=shown["hide_removed"],
        focus=selected if shown["focus_selected"] and selected in state.tree else None,
        collapse_closed=shown["collapse_closed"] and not shown["draw_all"],
        max_nodes=1_000_000 if shown["draw_all"] else 400,
        follow=follow,
        height=_HEIGHT,
    )
    key = f"tree_{session_id}"
    st.session_state[f"{key}_ids"] = chart.node_ids
    st.echarts_chart(
        chart.option,
        key=key,
        on_select=lambda: _pick(key),
        height=_HEIGHT,
        renderer=chart.renderer,
        alt=f"Plan tree of {len(state.tree)} nodes",
    )
    if chart.hidden:
        st.caption(
            f"{chart.hidden} of {len(state.tree)} nodes folded (+N marks where); use the node selector to reach any node"
        )
    with st.expander("Legend"):
        st.markdown(legend_markdown())


def _follow_toggle() -> bool:
    """ "Follow agent": on until the operator selects a node (`ui.url.following`), and again when they
    turn it on; while on, a plan larger than the chart is shown around the agent and the way down to
    it rather than around the selection, here and in the timeline's charts."""
    on = st.toggle(
        "Follow agent",
        value=following(),
        key=follow_key(),
        help="Keep the node the agent works on, and the way down to it, in view as the plan grows (here and "
        "in the timeline); selecting a node turns it off.",
    )
    follow_agent(on)  # read here, not in a callback, which a timer's run can skip (see `ui.url._follow`)
    return on


def _pick(key: str) -> None:
    """Map a click through the ids of the chart that was on screen; an edge click or a deselect keeps
    the current selection."""
    node_id = clicked_node(st.session_state.get(key), st.session_state.get(f"{key}_ids", []))
    if node_id is not None:
        select(node_id)


_PICKER_LIMIT = 800
"""Past this many nodes the selector lists the selection's neighbourhood, plus a jump-to-id box."""


def _jump(tree_ids: set[str]) -> None:
    wanted = st.session_state.get("jump_to", "").strip()
    if wanted in tree_ids:
        select(wanted)
        st.session_state["jump_error"] = None
    elif wanted:
        st.session_state["jump_error"] = f"there is no node {wanted!r}"


def _neighbourhood(state: SessionState, selected: str, order: list[str]) -> list[str]:
    """The ids a big tree's selector lists, in depth-first `order`: the selection, its children,
    siblings and ancestors, and the agent's path."""
    tree = state.tree
    node = tree[selected]
    keep = {selected, *node.children, *(a.id for a in tree.ancestors(node))}
    if node.parent is not None:
        keep.update(tree[node.parent].children)
    keep.update(n.id for n, _ in active_path(tree))
    return [node_id for node_id in order if node_id in keep]


def render_node_picker(state: SessionState) -> str | None:
    """A searchable selector as well as clicking: type an id or a word of the description; and the
    previous/next buttons (K/J), which step through the nodes in depth-first order.

    The selector is keyed by the node it shows (`ui.url.picker_key`), so a request the browser sent
    before it drew a new selection cannot pick the old node again. The buttons carry the node they
    lead to, worked out as they are drawn, not a step to take from whatever is selected when their
    callback runs: Streamlit can run a callback twice for one press (see `ui.commands`), and a step
    taken twice would skip a node, where the same node selected twice is still the one shown."""
    if not len(state.tree):
        return None
    selected = shown_node(state.tree)
    order = [node.id for node in state.tree.walk()]
    if len(order) > _PICKER_LIMIT:
        st.text_input(
            "Go to node id", key="jump_to", on_change=_jump, args=(set(state.tree.nodes),), placeholder="e.g. 0.3.12"
        )
        if st.session_state.get("jump_error"):
            st.error(md(st.session_state["jump_error"]))
        ids = _neighbourhood(state, selected, order)
    else:
        ids = order
    key = picker_key(NODE_KEY, selected)
    at = order.index(selected)
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small", key=NODE_KEY):
        st.selectbox(
            "Node",
            ids,
            index=ids.index(selected),
            key=key,
            format_func=lambda node_id: f"{node_id} · {short(state.tree[node_id].description, 60)}",
            help="Click a node in the tree, or search here by id or description",
        )
        moves: list[tuple[ShortcutName, str, str]] = [
            ("previous_node", ":material/keyboard_arrow_up:", order[max(at - 1, 0)]),
            ("next_node", ":material/keyboard_arrow_down:", order[min(at + 1, len(order) - 1)]),
        ]
        for name, icon, to in moves:
            shortcut = SHORTCUTS[name]
            st.button(
                "",
                icon=icon,
                key=name,
                help=shortcut.does,
                shortcut=shortcut.key,
                on_click=select,
                args=(to,),
            )
    return selected
