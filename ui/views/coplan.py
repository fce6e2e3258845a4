"""Co-planning: the plan the agent just made, reviewed and edited as a whole before the run acts on it.

When the engine stops to have a node's expansion reviewed (the console's "Start paused" for the root,
the after-expansion breakpoint for every node), the session page shows that node's children as one
editable table. "Apply plan" sends the whole table as one `plan` command (`planner.commands.SetPlan`),
so the edit is one step of the undo stack and one diff; "Apply and start" sends it with `start`,
which resumes the run only if the plan is applied.

The table's widget key carries a digest of the children as the tree has them, so once a plan is
applied the table starts afresh from the new plan, while a refused plan leaves the operator's edits
in place (docs/architecture.md, "ui/views/coplan.py").
"""

from __future__ import annotations

import hashlib
import math

import pandas as pd
import streamlit as st

from planner.commands import SetPlan
from planner.state import RunStatus, SessionState
from planner.status import REMOVED
from planner.tree import Node, NodeType, Status
from sessions.client import SessionView
from sessions.client.markdown import md_line
from ui.access import locked
from ui.context import Console
from ui.forms import FormProblem, scope, sending, show_result, submit

__all__ = ["COLUMN_WIDTHS", "ORDER_STEP", "render_plan_review", "review_node"]

_REVIEW = "plan review: "
"""How the engine's reason for a plan review begins (`planner.engine.Engine._pause_after`)."""

COLUMN_WIDTHS = {"order": 60, "id": 50, "description": 360}
"""Pixels per column, in the table's order: fixed so the table reads the same at every width (and a
browser test can find a cell); a sub-goal's words get most of it (at 230 px about 35 characters
showed). The row markers, for deleting rows, come first."""
ORDER_STEP = 0.001
"""The order numbers' step: a row goes between two others by a fraction ("1.5", "0.1"); with the
column's default step a typed 0.1 became 0."""


def review_node(state: SessionState) -> Node | None:
    """The node whose expansion the session is paused to have reviewed, or None.

    The engine records the review as a pause right after the step that expanded the node, so the node
    is the one that step worked on (`SessionState.current`); an expansion into an action has no
    sub-goals to plan."""
    if state.status is not RunStatus.PAUSED or not (state.reason or "").startswith(_REVIEW):
        return None
    node = state.tree.get(state.current or "")
    if node is None or node.type not in (NodeType.AND, NodeType.OR) or node.status is not Status.VISITED:
        return None
    return node


def render_plan_review(ctx: Console, view: SessionView) -> None:
    """The review box for the node the session is paused to review; nothing when it is not paused for one.

    Its buttons are read inline, not by callback: the edited table is the data editor's return value,
    which only the page's run has."""
    state = view.state
    node = review_node(state)
    if node is None:
        return
    where = scope(view.session_id, "plan", node.id)
    children = [child for child in state.tree.children(node) if child.status not in REMOVED]
    with st.container(border=True, key="plan_review"):
        st.markdown(f"**Plan review**: {md_line(node.id)} was expanded as {node.type.value}")
        st.caption(
            "Reword a sub-goal, delete rows, add rows at the bottom, and change the order numbers to move "
            "rows; then apply the plan as a whole. Steps that already started must stay as they are."
        )
        started = [f"{child.id} ({child.status.value})" for child in children if child.status is not Status.UNVISITED]
        if started:
            st.caption(f"Already started, so kept as they are and in this order: {md_line(', '.join(started))}")
        table = _table(children)
        edited = st.data_editor(
            table,
            key=where.key(f"plan_table_{_digest(children)}"),
            num_rows="dynamic",
            hide_index=True,
            disabled=["id"],
            column_order=list(COLUMN_WIDTHS),
            column_config={
                "order": st.column_config.NumberColumn(
                    "order", width=COLUMN_WIDTHS["order"], format="%g", step=ORDER_STEP
                ),
                # A new row has no id yet: blank, not "None".
                "id": st.column_config.TextColumn("id", width=COLUMN_WIDTHS["id"], default=""),
                "description": st.column_config.TextColumn(
                    "description", width=COLUMN_WIDTHS["description"], max_chars=2000
                ),
            },
        )
        cols = st.columns(2)
        if cols[0].button("Apply plan", key="plan_apply", **locked("plan")):
            submit(*sending(ctx, where, "plan", lambda: _plan(node, table, edited, start=False)))
        if cols[1].button("Apply and start", key="plan_start", type="primary", **locked("plan")):
            submit(*sending(ctx, where, "plan", lambda: _plan(node, table, edited, start=True)))
        show_result(view, where, "plan")


def _table(children: list[Node]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "order": [float(index) for index in range(1, len(children) + 1)],
            "id": [child.id for child in children],
            "description": [child.description for child in children],
        }
    ).astype({"order": "float64", "id": "object", "description": "object"})


def _digest(children: list[Node]) -> str:
    """The plan as the tree has it: a new plan (applied, or changed by the engine) is a new table."""
    text = "\x1f".join(f"{child.id}\x1e{child.status.value}\x1e{child.description}" for child in children)
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def _plan(node: Node, table: pd.DataFrame, edited: pd.DataFrame, *, start: bool) -> SetPlan:
    """The `plan` command the edited table says; `FormProblem` says why it cannot be sent.

    Rows go by their order number (a row without one goes last), rows with the same number stay in
    table order; a kept child whose text is unchanged is sent by id alone."""
    was = dict(zip(table["id"], table["description"], strict=True))
    rows = []
    for position, row in enumerate(edited.to_dict("records"), start=1):
        child_id = row.get("id") if isinstance(row.get("id"), str) and row.get("id") else None
        text = row.get("description")
        text = text.strip() if isinstance(text, str) else ""
        if not text:
            what = child_id or "the new sub-goal"
            raise FormProblem(f"Row {position} ({what}) has no description; write one, or delete the row.")
        order = row.get("order")
        key = order if isinstance(order, int | float) and not math.isnan(order) else math.inf
        rows.append((key, position, child_id, text))
    if not rows:
        raise FormProblem(f"The plan of {node.id} would be empty; keep at least one sub-goal.")
    rows.sort(key=lambda row: (row[0], row[1]))
    children = [_child(child_id, text, was) for _, _, child_id, text in rows]
    return SetPlan.model_validate({"node": node.id, "children": children, "start": start})


def _child(child_id: str | None, text: str, was: dict[str, str]) -> dict[str, str]:
    if child_id is None:
        return {"description": text}
    return {"id": child_id} if was.get(child_id) == text else {"id": child_id, "description": text}
