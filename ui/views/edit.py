"""Editing the plan on the selected node. Forms only send commands; the runner validates and applies
them at the next step boundary, and each form shows the engine's answer next to it."""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from planner.state import RunStatus, SessionState
from planner.status import CLOSED, REOPENABLE
from planner.tree import Node, NodeType, Status
from ui.commands import send
from ui.context import Console
from ui.text import md, md_line
from ui.views.sidebar import BREAKPOINT_LABELS

__all__ = ["render_approval", "render_edit"]


def _submit(ctx: Console, session_id: str, form: str, payload: dict[str, Any]) -> None:
    outcome = send(ctx, session_id, payload)
    st.session_state[f"result_{form}"] = (outcome.ok, outcome.message)


def _result(form: str) -> None:
    """The engine's answer; a rejection quotes node text, goals or reasons, so it is escaped."""
    result = st.session_state.get(f"result_{form}")
    if result:
        (st.success if result[0] else st.error)(md(result[1]))


def render_approval(ctx: Console, session_id: str, state: SessionState) -> None:
    approval = state.approval
    if state.status is not RunStatus.AWAITING_APPROVAL or approval is None:
        return
    with st.container(border=True):
        st.markdown(f"**:material/front_hand: Approval required** at {md(approval.node_id)}: {md(approval.rule)}")
        st.code(approval.action, language=None)
        with st.form("approval"):
            edited = st.text_input("Action", value=approval.action, key="approval_action")
            reason = st.text_input("Reason (for a rejection)", key="approval_reason")
            cols = st.columns(3)
            approve = cols[0].form_submit_button("Approve", type="primary", key="approve_submit")
            edit = cols[1].form_submit_button("Run edited action", key="edit_action_submit")
            reject = cols[2].form_submit_button("Reject", key="reject_submit")
        if approve:
            _submit(ctx, session_id, "approval", {"kind": "approve", "node": approval.node_id})
        elif edit:
            _submit(ctx, session_id, "approval", {"kind": "edit_action", "action": edited, "node": approval.node_id})
        elif reject:
            _submit(ctx, session_id, "approval", {"kind": "reject", "reason": reason})
        _result("approval")


def render_edit(ctx: Console, session_id: str, state: SessionState, node: Node | None) -> None:
    if state.finished:
        st.info("This session has ended. Fork it from the timeline to change the plan and run again.")
        return
    _breakpoints(ctx, session_id, state)
    _constraints(ctx, session_id, state)
    _budget(ctx, session_id, state)
    if node is None:
        return
    st.markdown(f"**Edit the plan at {md(node.id)}** ({node.type.value}, {node.status.value})")
    _inject(ctx, session_id, state, node)
    _prune(ctx, session_id, node)
    _rewrite(ctx, session_id, node)
    if node.status in REOPENABLE:
        if st.button(f"Reopen {md_line(node.id)}", key="reopen_btn"):
            _submit(ctx, session_id, "reopen", {"kind": "reopen", "node": node.id})
        _result("reopen")
    if node.type is NodeType.OR:
        _force(ctx, session_id, state, node)


def _breakpoints(ctx: Console, session_id: str, state: SessionState) -> None:
    current = sorted(state.config.breakpoints)
    with st.form("breakpoints"):
        chosen = st.multiselect(
            "Breakpoints (pause the run by itself)",
            list(BREAKPOINT_LABELS),
            default=current,
            format_func=lambda b: BREAKPOINT_LABELS[b],
            key="bp_choice",
        )
        if st.form_submit_button("Set breakpoints", key="bp_submit"):
            _submit(ctx, session_id, "breakpoints", {"kind": "breakpoints", "breakpoints": [b.value for b in chosen]})
    _result("breakpoints")


def _budget(ctx: Console, session_id: str, state: SessionState) -> None:
    cap = state.config.max_cost_usd
    with st.form("budget"):
        value = st.number_input(
            f"Cost cap, USD (0: none) · spent so far ${state.metrics.cost_usd:.4f}",
            min_value=0.0,
            max_value=10_000.0,
            value=float(cap or 0.0),
            step=0.5,
            key=f"budget_value_{cap}",
        )
        if st.form_submit_button("Set cost cap", key="budget_submit"):
            _submit(ctx, session_id, "budget", {"kind": "budget", "max_cost_usd": value or None})
    _result("budget")


def _constraints(ctx: Console, session_id: str, state: SessionState) -> None:
    current = state.constraints or []
    version = hashlib.sha1("\n".join(current).encode()).hexdigest()[:8]
    with st.form("constraints"):
        text = st.text_area(
            "Task constraints (one per line; every later prompt is held to them)",
            value="\n".join(current),
            key=f"constraints_text_{version}",
            height=90,
        )
        if st.form_submit_button("Set constraints", key="constraints_submit"):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            _submit(ctx, session_id, "constraints", {"kind": "constraints", "constraints": lines})
    _result("constraints")


def _inject(ctx: Console, session_id: str, state: SessionState, node: Node) -> None:
    children = state.tree.children(node)
    with st.form("inject"):
        st.markdown(
            "Inject sub-goals (one per line)" if node.type is not NodeType.OR else "Inject alternatives (one per line)"
        )
        goals = st.text_area("Sub-goals", key="inject_goals", height=90, label_visibility="collapsed")
        positions = ["at the end", *(f"before {c.id} · {c.description[:40]}" for c in children)]
        position = st.selectbox(
            "Position", range(len(positions)), format_func=positions.__getitem__, key="inject_position"
        )
        node_type = None
        if node.type is NodeType.UNKNOWN:
            node_type = st.radio(
                "This node is not expanded yet; make it", ["AND", "OR"], horizontal=True, key="inject_type"
            )
        scores = ""
        if node.type in (NodeType.OR, NodeType.UNKNOWN):
            scores = st.text_input(
                "Scores for OR alternatives, comma-separated (default 1.0 each: tried before the model's)",
                key="inject_scores",
            )
        if st.form_submit_button("Inject", key="inject_submit"):
            payload: dict[str, Any] = {
                "kind": "inject",
                "parent": node.id,
                "goals": [line.strip() for line in goals.splitlines() if line.strip()],
                "position": None if position == 0 else position - 1,
            }
            if node_type:
                payload["node_type"] = node_type
            if scores.strip():
                try:
                    payload["scores"] = [float(part) for part in scores.split(",")]
                except ValueError:
                    st.session_state["result_inject"] = (
                        False,
                        "scores must be numbers between 0 and 1, comma-separated",
                    )
                    payload = {}
            if payload:
                _submit(ctx, session_id, "inject", payload)
    _result("inject")


def _prune(ctx: Console, session_id: str, node: Node) -> None:
    with st.form("prune"):
        reason = st.text_input(f"Prune {md_line(node.id)}: reason", key="prune_reason")
        if st.form_submit_button("Prune", key="prune_submit"):
            _submit(ctx, session_id, "prune", {"kind": "prune", "node": node.id, "reason": reason})
    _result("prune")


def _rewrite(ctx: Console, session_id: str, node: Node) -> None:
    if node.status in CLOSED:
        return
    with st.form("edit"):
        description = st.text_area("Description", value=node.description, key=f"edit_description_{node.id}", height=70)
        reexpand = st.checkbox("Expand it again (drops its open children)", key="edit_reexpand")
        if st.form_submit_button("Save description", key="edit_submit"):
            _submit(
                ctx,
                session_id,
                "edit",
                {"kind": "edit", "node": node.id, "description": description, "reexpand": reexpand},
            )
    _result("edit")


def _force(ctx: Console, session_id: str, state: SessionState, node: Node) -> None:
    untried = [c for c in state.tree.children(node) if c.status is Status.UNVISITED]
    if not untried:
        return
    with st.form("force"):
        child = st.selectbox(
            "Run this alternative next",
            [c.id for c in untried],
            format_func=lambda i: f"{i} · {state.tree[i].description[:50]} ({state.tree[i].score or 0:g})",
            key="force_child",
        )
        if st.form_submit_button("Force alternative", key="force_submit"):
            _submit(ctx, session_id, "force", {"kind": "force", "node": node.id, "child": child})
    _result("force")
