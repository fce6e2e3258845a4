"""The selected node's action bar, right under the node selector: what can be done to the node is one
click away whichever tab is open, without scrolling.

The actions that need nothing typed are pressed here (Break here or Remove breakpoint, Reopen, Undo
last edit); those that need input (Prune…, Inject…, Edit…, Force… on an OR node) open the Edit plan
tab with their form first (`opened_form`). A button that does not apply to the node is drawn
disabled, its help saying why, so the bar keeps its layout from node to node. Every press sends a
command through `ui.forms.submit`, the runner applies it at the next step boundary, and the engine's
answer shows under the bar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal

import streamlit as st

from planner.commands import Command, NodeBreakpoint, Reopen, Undo, undo_refusal
from planner.state import SessionState
from planner.status import CLOSED, REMOVED, REOPENABLE
from planner.tree import ROOT_ID, Node, NodeType, Status
from sessions.client import SessionView
from sessions.client.markdown import md, md_line
from ui.access import refusal as may_not
from ui.context import Console
from ui.forms import Scope, scope, sending, show_result, submit
from ui.shortcuts import SHORTCUTS

__all__ = ["EDIT_TAB", "PANEL_KEY", "NodeForm", "opened_form", "render_node_actions"]

NodeForm = Literal["prune", "inject", "edit", "force"]
"""The node's forms in the Edit plan tab that a button of the bar opens."""

PANEL_KEY: Final = "panel"
"""The key of the right column's tab set (and its `?panel=` in the URL): setting it opens a tab."""
EDIT_TAB: Final = "Edit plan"
"""The label of the tab that holds the node's forms."""

_OPENED = "_node_form_opened"
"""Session state: (session id, node id, form) the bar opened last."""
_UNDO = "undo_bar"
"""The bar's Undo answers under the bar; the Edit plan tab's Undo (form "undo") under its own button."""


def opened_form(session_id: str, node_id: str) -> NodeForm | None:
    """The form the bar opened last for this node, which the Edit plan tab draws first; None for another node."""
    opened = st.session_state.get(_OPENED)
    return opened[2] if opened is not None and opened[:2] == (session_id, node_id) else None


def _open(session_id: str, node_id: str, form: NodeForm) -> None:
    """The callback of a button that needs input: set before the tabs are drawn, the tab set opens there."""
    st.session_state[_OPENED] = (session_id, node_id, form)
    st.session_state[PANEL_KEY] = EDIT_TAB


def render_node_actions(ctx: Console, view: SessionView, node: Node | None) -> None:
    """The bar for `node`, headed by its id, type and status; nothing once the session has ended (the
    Edit plan tab says how to go on: fork it)."""
    state, session_id = view.state, view.session_id
    if node is None or state.finished:
        return
    where = scope(session_id, node.id)
    with st.container(horizontal=True, vertical_alignment="center", gap="xsmall", key="node_actions"):
        st.markdown(f"**Edit the plan at {md(node.id)}** ({node.type.value}, {node.status.value})", width="content")
        _breakpoint(ctx, where, state, node)
        _reopen(ctx, where, node)
        refusal = may_not("undo") or undo_refusal(state)
        _button(
            ctx,
            scope(session_id),
            _UNDO,
            "Undo last edit",
            Undo,
            refusal,
            "Take back the last plan edit; none of its nodes has run yet.",
        )
        for form, label, why_not in _inputs(state, node):
            why_not = may_not(form) or why_not
            st.button(
                label,
                key=f"open_{form}",
                disabled=why_not is not None,
                help=md(why_not) if why_not else f"Open the {form} form of {md_line(node.id)} in the Edit plan tab",
                on_click=_open,
                args=(session_id, node.id, form),
            )
    show_result(view, where, "breakpoint")
    show_result(view, where, "reopen")
    show_result(view, scope(session_id), _UNDO)


def _button(
    ctx: Console,
    where: Scope,
    form: str,
    label: str,
    build: Callable[[], Command],
    why_not: str | None,
    does: str,
    shortcut: str | None = None,
) -> None:
    """A one-click action: its command is sent as a form's is; disabled, its help says why."""
    st.button(
        label,
        key=f"{form}_btn",
        disabled=why_not is not None,
        help=md(why_not) if why_not else does,
        on_click=submit,
        args=sending(ctx, where, form, build),
        shortcut=shortcut,
    )


def _breakpoint(ctx: Console, where: Scope, state: SessionState, node: Node) -> None:
    """ "Break here" on a node the run can still enter, "Remove breakpoint" wherever one is set."""
    marked = node.id in state.config.node_breakpoints
    why_not = None
    if not marked and node.status is Status.SUCCESS:
        why_not = f"{node.id} has succeeded: the run does not enter it again"
    elif not marked and node.status in REOPENABLE:
        why_not = f"a finished node ({node.status.value}): reopen {node.id} first"
    label = "Remove breakpoint" if marked else "Break here"
    _button(
        ctx,
        where,
        "breakpoint",
        f"{label} ({md_line(node.id)})",
        lambda: NodeBreakpoint(node=node.id, off=marked),
        may_not("breakpoint") or why_not,
        "The run pauses whenever it is about to enter this node, until the breakpoint is removed.",
        SHORTCUTS["breakpoint"].key,
    )


def _reopen(ctx: Console, where: Scope, node: Node) -> None:
    why_not = None
    if node.status not in REOPENABLE:
        why_not = f"only a failed, pruned or deleted node can be reopened; {node.id} is {node.status.value}"
    _button(
        ctx,
        where,
        "reopen",
        f"Reopen {md_line(node.id)}",
        lambda: Reopen(node=node.id),
        may_not("reopen") or why_not,
        "Put it back in the plan: an action runs again, a sub-goal is expanded again.",
    )


def _inputs(state: SessionState, node: Node) -> list[tuple[NodeForm, str, str | None]]:
    """The buttons that open a form: (form, label, why it does not apply or None). Each is disabled
    exactly when the Edit plan tab draws no such form for the node, or the engine would refuse it whatever is typed."""
    prune = None
    if node.id == ROOT_ID:
        prune = "the root cannot be pruned; stop the session instead"
    elif node.status in REMOVED:
        prune = f"{node.id} is already {node.status.value}"
    inject = None
    parent = state.tree.parent(node)
    beside = parent is not None and parent.status not in REMOVED  # as the inject form offers (`ui.views.edit`)
    if node.type is NodeType.ACTION and node.parent is None:
        inject = f"{node.id} is an action and the root: there is nowhere to inject"
    elif node.status in REMOVED and not beside:
        inject = f"{node.id} is {node.status.value}: reopen it to inject under it"
    edit = None
    if node.status is Status.SUCCESS:
        edit = f"{node.id} has succeeded: its description is history"
    elif node.status in CLOSED:
        edit = f"{node.id} is {node.status.value}: reopen it before editing"
    buttons: list[tuple[NodeForm, str, str | None]] = [
        ("prune", "Prune…", prune),
        ("inject", "Inject…", inject),
        ("edit", "Edit…", edit),
    ]
    if node.type is NodeType.OR:
        untried = any(child.status is Status.UNVISITED for child in state.tree.children(node))
        buttons.append(("force", "Force…", None if untried else f"no untried alternative of {node.id} is left"))
    return buttons
