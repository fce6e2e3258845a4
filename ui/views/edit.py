"""Editing the plan on the selected node. Forms only send commands; the runner validates and applies
them at the next step boundary, and each form shows the engine's answer next to it. Under the forms,
the operator's last plan edit shows what it did (added, removed and changed nodes, before → after)
with the button that takes it back while none of its nodes has run.

Every form lives in a scope (`ui.forms`): the node's forms in (session, node), the session's settings
in (session), the approval box in (session, approval request). Input the form can tell is wrong
(no sub-goal, no reason) is refused here in one sentence, before a command is built.
"""

from __future__ import annotations

import hashlib
from typing import Any, cast

import streamlit as st

from planner.commands import undo_refusal
from planner.diff import EditDiff, edit_diff
from planner.events import CommandApplied, NodeChange, NodeFace
from planner.state import RunStatus, SessionState
from planner.status import CLOSED, REOPENABLE
from planner.tree import Node, NodeType, Status
from sessions.markdown import md, md_line, short
from ui.context import Console
from ui.forms import Scope, scope, show_result, submit
from ui.shortcuts import SHORTCUTS
from ui.views.sidebar import BREAKPOINT_LABELS

__all__ = ["render_approval", "render_node_edit", "render_settings"]

_ENDED = "This session has ended. Fork it from the timeline to change the plan and run again."
_SHOWN_ACTION = 300
"""An action longer than this is clamped in the approval box (the edit field holds all of it)."""


def _value(where: Scope, name: str) -> Any:
    return st.session_state.get(where.key(name))


def _lines(text: str | None) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def render_approval(ctx: Console, session_id: str, state: SessionState, request: int) -> None:
    """`request` tells approval requests apart (the event number that asked), so one request's answer
    never shows under the next."""
    approval = state.approval
    if state.status is not RunStatus.AWAITING_APPROVAL or approval is None:
        return
    where = scope(session_id, "approval", approval.node_id, str(request))
    with st.container(border=True):
        st.markdown(f"**:material/front_hand: Approval required** at {md(approval.node_id)}: {md(approval.rule)}")
        st.code(short(approval.action, _SHOWN_ACTION), language=None, wrap_lines=True)
        with st.form(where.key("approval")):
            st.text_input("Action", value=approval.action, key=where.key("approval_action"))
            st.text_input("Reason (for a rejection)", key=where.key("approval_reason"))
            cols = st.columns(3)

            def edited() -> dict[str, Any] | str:
                action = (_value(where, "approval_action") or "").strip()
                if not action:
                    return "Write the action to run instead (for example click [12]), or approve the one shown."
                return {"kind": "edit_action", "action": action, "node": approval.node_id}

            def rejected() -> dict[str, Any] | str:
                reason = (_value(where, "approval_reason") or "").strip()
                return {"kind": "reject", "reason": reason} if reason else "Give a reason for the rejection."

            approve: dict[str, Any] = {"kind": "approve", "node": approval.node_id}
            for column, label, key, shortcut, payload in (
                (cols[0], "Approve", "approve_submit", SHORTCUTS["approve"].key, lambda: approve),
                (cols[1], "Run edited action", "edit_action_submit", None, edited),
                (cols[2], "Reject", "reject_submit", SHORTCUTS["reject"].key, rejected),
            ):
                column.form_submit_button(
                    label,
                    type="primary" if key == "approve_submit" else "secondary",
                    key=key,
                    on_click=submit,
                    args=(ctx, where, "approval", payload),
                    shortcut=shortcut,
                )
        show_result(where, "approval")


def render_node_edit(ctx: Console, session_id: str, state: SessionState, node: Node | None) -> None:
    """The actions on the selected node (inject, prune, edit, reopen, force): drawn beside the tree, in
    the inspector's column, so the node and what can be done to it are seen together."""
    if state.finished:
        st.info(_ENDED)
        return
    if node is None:
        _last_edit(ctx, session_id, state)
        return
    where = scope(session_id, node.id)
    st.markdown(f"**Edit the plan at {md(node.id)}** ({node.type.value}, {node.status.value})")
    # The one-line actions first, so that at 1600×1000 each form's field is on screen beside the tree.
    _prune(ctx, where, node)
    if node.status in REOPENABLE:
        st.button(
            f"Reopen {md_line(node.id)}",
            key="reopen_btn",
            on_click=submit,
            args=(ctx, where, "reopen", lambda: {"kind": "reopen", "node": node.id}),
        )
        show_result(where, "reopen")
    if node.type is NodeType.OR:
        _force(ctx, where, state, node)
    _inject(ctx, where, state, node)
    _rewrite(ctx, where, node)
    _last_edit(ctx, session_id, state)


_SHOWN_TEXT = 120
"""A description or action quoted in an edit's diff is clamped here (the node shows all of it)."""


def _last_edit(ctx: Console, session_id: str, state: SessionState) -> None:
    """The latest plan edit an undo would take back, as the nodes it added, removed and changed, and
    the Undo button: enabled only when the undo would apply, with the refusal as its help otherwise."""
    where = scope(session_id)
    with st.container(border=True, key="last_edit"):
        if state.edits:
            event = state.edits[-1]
            applied = cast(CommandApplied, event.payload)
            kind = str(applied.command.get("kind", "edit")).replace("_", " ")
            diff = edit_diff(event.seq, kind, event.node_id, applied.changes)
            at = f" at {event.node_id}" if event.node_id else ""
            st.markdown(f"**Last edit**: {md_line(f'{kind}{at} (event {event.seq})')}")
            st.markdown("  \n".join(md_line(line) for line in _diff_lines(diff)))
        else:
            st.caption("No plan edit to undo.")
        refusal = undo_refusal(state)
        st.button(
            "Undo last edit",
            key="undo_btn",
            disabled=refusal is not None,
            help=md(refusal) if refusal else "Take back the last plan edit; none of its nodes has run yet.",
            on_click=submit,
            args=(ctx, where, "undo", lambda: {"kind": "undo"}),
        )
    show_result(where, "undo")


def _diff_lines(diff: EditDiff) -> list[str]:
    """An edit's diff as plain lines, one per node: "added 0.4 · check the brand", "removed 0.3 · …
    (UNVISITED → PRUNED)", "changed 0.2 · description "a" → "b"". Escaping is the caller's."""
    lines = [f"added {c.id} · {short(c.after.description, _SHOWN_TEXT)}" for c in diff.added]
    lines += [
        f"removed {c.id} · {short(c.after.description, _SHOWN_TEXT)} ({_was(c).status.value} → {c.after.status.value})"
        for c in diff.removed
    ]
    lines += [f"changed {c.id} · {'; '.join(_moves(c))}" for c in diff.changed]
    return lines


def _was(change: NodeChange) -> NodeFace:
    return change.before if change.before is not None else change.after


def _moves(change: NodeChange) -> list[str]:
    """What moved on a changed node, before → after; an edit that only marks it as the operator's says so."""
    before, after = _was(change), change.after
    moves = [
        f"{name} {old.value} → {new.value}"
        for name, old, new in (
            ("status", before.status, after.status),
            ("type", before.type, after.type),
        )
        if old is not new
    ]
    moves += [
        f"{name} {_quoted(old)} → {_quoted(new)}"
        for name, old, new in (
            ("description", before.description, after.description),
            ("action", before.action, after.action),
            ("forced alternative", before.forced, after.forced),
        )
        if old != new
    ]
    return moves or ["now kept from the model's own updates"]


def _quoted(text: str | None) -> str:
    return "none" if text is None else f"“{short(text, _SHOWN_TEXT)}”"


def render_settings(ctx: Console, session_id: str, state: SessionState) -> None:
    """The run's own settings, which belong to no node: breakpoints, the task's constraints, the cost cap."""
    if state.finished:
        st.info(_ENDED)
        return
    session = scope(session_id)
    _breakpoints(ctx, session, state)
    _constraints(ctx, session, state)
    _budget(ctx, session, state)


def _breakpoints(ctx: Console, where: Scope, state: SessionState) -> None:
    current = sorted(state.config.breakpoints)
    with st.form(where.key("breakpoints")):
        st.multiselect(
            "Breakpoints (pause the run by itself)",
            list(BREAKPOINT_LABELS),
            default=current,
            format_func=lambda b: BREAKPOINT_LABELS[b],
            key=where.key("bp_choice"),
        )
        st.form_submit_button(
            "Set breakpoints",
            key="bp_submit",
            on_click=submit,
            args=(
                ctx,
                where,
                "breakpoints",
                lambda: {"kind": "breakpoints", "breakpoints": [b.value for b in _value(where, "bp_choice") or ()]},
            ),
        )
    show_result(where, "breakpoints")


def _budget(ctx: Console, where: Scope, state: SessionState) -> None:
    cap = state.config.max_cost_usd
    value_key = f"budget_value_{cap}"
    with st.form(where.key("budget")):
        st.number_input(
            f"Cost cap, USD (0: none) · spent so far ${state.metrics.cost_usd:.4f}",
            min_value=0.0,
            max_value=10_000.0,
            value=float(cap or 0.0),
            step=0.5,
            key=where.key(value_key),
        )
        st.form_submit_button(
            "Set cost cap",
            key="budget_submit",
            on_click=submit,
            args=(ctx, where, "budget", lambda: {"kind": "budget", "max_cost_usd": _value(where, value_key) or None}),
        )
    show_result(where, "budget")


def _constraints(ctx: Console, where: Scope, state: SessionState) -> None:
    current = state.constraints or []
    text_key = "constraints_text_" + hashlib.sha1("\n".join(current).encode()).hexdigest()[:8]
    with st.form(where.key("constraints")):
        st.text_area(
            "Task constraints (one per line; every later prompt is held to them)",
            value="\n".join(current),
            key=where.key(text_key),
            height=90,
        )
        st.form_submit_button(
            "Set constraints",
            key="constraints_submit",
            on_click=submit,
            args=(
                ctx,
                where,
                "constraints",
                lambda: {"kind": "constraints", "constraints": _lines(_value(where, text_key))},
            ),
        )
    show_result(where, "constraints")


def _scores(text: str, count: int) -> list[float] | str:
    """The scores typed for injected OR alternatives, or the sentence saying what is wrong with them."""
    try:
        scores = [float(part) for part in text.split(",")]
    except ValueError:
        return "Scores must be numbers between 0 and 1, comma-separated."
    if any(not 0.0 <= score <= 1.0 for score in scores):
        return "Scores must be numbers between 0 and 1, comma-separated."
    if len(scores) != count:
        return f"Give one score per alternative ({count}), or none."
    return scores


def _inject(ctx: Console, where: Scope, state: SessionState, node: Node) -> None:
    children = state.tree.children(node)
    alternatives = node.type in (NodeType.OR, NodeType.UNKNOWN)
    with st.form(where.key("inject")):
        st.markdown(
            "Inject sub-goals (one per line)" if node.type is not NodeType.OR else "Inject alternatives (one per line)"
        )
        st.text_area("Sub-goals", key=where.key("inject_goals"), height=90, label_visibility="collapsed")
        positions = ["at the end", *(f"before {c.id} · {short(c.description, 40)}" for c in children)]
        st.selectbox(
            "Position", range(len(positions)), format_func=positions.__getitem__, key=where.key("inject_position")
        )
        if node.type is NodeType.UNKNOWN:
            st.radio(
                "This node is not expanded yet; make it",
                ["AND", "OR"],
                horizontal=True,
                key=where.key("inject_type"),
            )
        if alternatives:
            st.text_input(
                "Scores for OR alternatives, comma-separated (default 1.0 each: tried before the model's)",
                key=where.key("inject_scores"),
            )

        def payload() -> dict[str, Any] | str:
            goals = _lines(_value(where, "inject_goals"))
            if not goals:
                return "Write at least one sub-goal, one per line, before pressing Inject."
            position = _value(where, "inject_position") or 0
            built: dict[str, Any] = {
                "kind": "inject",
                "parent": node.id,
                "goals": goals,
                "position": None if position == 0 else position - 1,
            }
            node_type = _value(where, "inject_type")
            if node.type is NodeType.UNKNOWN and node_type:
                built["node_type"] = node_type
            scores_text = (_value(where, "inject_scores") or "").strip() if alternatives else ""
            if scores_text:
                scores = _scores(scores_text, len(goals))
                if isinstance(scores, str):
                    return scores
                built["scores"] = scores
            return built

        st.form_submit_button(
            "Inject",
            key="inject_submit",
            on_click=submit,
            args=(ctx, where, "inject", payload, ("inject_goals", "inject_scores")),
        )
    show_result(where, "inject")


def _prune(ctx: Console, where: Scope, node: Node) -> None:
    with st.form(where.key("prune")):
        st.text_input(f"Prune {md_line(node.id)}: reason", key=where.key("prune_reason"))

        def payload() -> dict[str, Any] | str:
            reason = (_value(where, "prune_reason") or "").strip()
            if not reason:
                return "Give a reason for the prune: it is recorded with the node."
            return {"kind": "prune", "node": node.id, "reason": reason}

        st.form_submit_button(
            "Prune", key="prune_submit", on_click=submit, args=(ctx, where, "prune", payload, ("prune_reason",))
        )
    show_result(where, "prune")


def _rewrite(ctx: Console, where: Scope, node: Node) -> None:
    if node.status in CLOSED:
        return
    text_key = "edit_description_" + hashlib.sha1(node.description.encode()).hexdigest()[:8]
    with st.form(where.key("edit")):
        st.text_area("Description", value=node.description, key=where.key(text_key), height=70)
        st.checkbox("Expand it again (drops its open children)", key=where.key("edit_reexpand"))

        def payload() -> dict[str, Any] | str:
            description = (_value(where, text_key) or "").strip()
            if not description:
                return "The description cannot be empty: write what the node should achieve."
            reexpand = bool(_value(where, "edit_reexpand"))
            return {"kind": "edit", "node": node.id, "description": description, "reexpand": reexpand}

        st.form_submit_button(
            "Save description", key="edit_submit", on_click=submit, args=(ctx, where, "edit", payload)
        )
    show_result(where, "edit")


def _force(ctx: Console, where: Scope, state: SessionState, node: Node) -> None:
    untried = [c for c in state.tree.children(node) if c.status is Status.UNVISITED]
    if not untried:
        return
    with st.form(where.key("force")):
        st.selectbox(
            "Run this alternative next",
            [c.id for c in untried],
            format_func=lambda i: f"{i} · {short(state.tree[i].description, 50)} ({state.tree[i].score or 0:g})",
            key=where.key("force_child"),
        )
        st.form_submit_button(
            "Force alternative",
            key="force_submit",
            on_click=submit,
            args=(
                ctx,
                where,
                "force",
                lambda: {"kind": "force", "node": node.id, "child": _value(where, "force_child")},
            ),
        )
    show_result(where, "force")
