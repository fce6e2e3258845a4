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
from collections.abc import Callable
from typing import Any, cast

import streamlit as st

from planner.commands import (
    Approve,
    Command,
    Edit,
    EditAction,
    Force,
    Inject,
    Prune,
    Reject,
    SetBreakpoints,
    SetBudget,
    SetConstraints,
    Undo,
    undo_refusal,
)
from planner.diff import edit_diff
from planner.effects import SentRequest
from planner.events import CommandApplied
from planner.state import Approval, RunStatus
from planner.status import CLOSED, REMOVED, REOPENABLE
from planner.tree import Node, NodeType, Status
from sessions.client import SessionView
from sessions.client.markdown import md, md_line, short
from ui.access import locked
from ui.access import refusal as may_not
from ui.context import Console
from ui.diff_lines import diff_lines
from ui.forms import FormProblem, Scope, scope, sending, show_result, submit
from ui.layout import (
    APPROVAL_ACTION,
    APPROVAL_BOX,
    APPROVAL_NO_PICTURE,
    APPROVAL_PICTURE,
    first_in_column,
    rules_in_place,
)
from ui.shortcuts import SHORTCUTS
from ui.views.node_actions import NodeForm, opened_form
from ui.views.outline import outlined_url
from ui.views.sidebar import BREAKPOINT_LABELS
from ui.views.templates import render_template_inject, render_template_library, render_template_save
from ui.views.unplanned import ask_meaning, meaning

__all__ = ["APPROVAL_PICTURE_ALT", "render_approval", "render_node_edit", "render_settings"]

_ENDED = "This session has ended. Fork it from the timeline to change the plan and run again."
_SHOWN_ACTION = 300
"""An action longer than this is clamped in the approval box (the edit field holds all of it)."""


def _value(where: Scope, name: str) -> Any:
    return st.session_state.get(where.key(name))


def _lines(text: str | None) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def render_approval(ctx: Console, view: SessionView) -> None:
    """The held action beside the page it would act on, its element outlined, and the operator's four
    answers: approve it, run an edited action instead, or reject it (with a reason) and either let the
    planner recover at once or pause first to change the plan. When the effect fence held what the
    action's page sent, the box names each request (method, address, what sent it, its fields with
    secrets masked) and offers a fifth: approve and always allow such requests in this session.

    Approval requests are told apart by the event number that asked, so one request's answer never
    shows under the next; an edited action the page cannot run is refused with the reason just under
    the form, and the request stays. Everything in the box comes from `view`, screenshot included, so
    its parts are drawn together."""
    state = view.state
    approval = state.approval
    if state.status is not RunStatus.AWAITING_APPROVAL or approval is None:
        return
    if not rules_in_place():  # a fresh page: the box comes once the tab reports the rules in force
        st.markdown(f"**:material/front_hand: Approval required** at {md(approval.node_id)}: {md(approval.rule)}")
        return
    where = scope(view.session_id, "approval", approval.node_id, str(view.approval_request))
    picture = outlined_url(view.approval_picture, approval.box) if view.approval_picture is not None else None
    # The box comes to the browser as a run of elements, drawn over several frames; the page's rules
    # (`ui.layout.page_rules`, sent first in every run of the page) hide it until the last is there.
    with st.container(border=True, key=APPROVAL_BOX):  # in the side column: one part under the other
        st.markdown(f"**:material/front_hand: Approval required** at {md(approval.node_id)}: {md(approval.rule)}")
        _approval_picture(approval, picture)
        if approval.role or approval.name:
            st.markdown(f"**Element**: {md_line(approval.role)} “{md_line(approval.name, _SHOWN_NAME)}”")
        with st.container(key=APPROVAL_ACTION):
            st.code(short(approval.action, _SHOWN_ACTION), language=None, wrap_lines=True)
        if approval.requests:
            _held_requests(approval.requests)
        _approval_form(ctx, where, approval)
        show_result(view, where, "approval")


APPROVAL_PICTURE_ALT = "the page the held action would act on, its element outlined"
"""The approval picture's alternative text (what a screen reader, or a test, finds it by)."""
_SHOWN_NAME = 200
"""An element name longer than this is clamped in the approval box."""


_SHOWN_FIELD = 120
"""A request field's value longer than this is clamped in the approval box."""


def _held_requests(requests: tuple[SentRequest, ...]) -> None:
    """What the page sent that waits for the operator: each request, then its fields (a form's or a JSON
    body's; the fence has already masked the ones whose names say they are secret)."""
    st.markdown(
        f"**The page sent** (held, {len(requests)}): approving lets {'it' if len(requests) == 1 else 'each'} through once"
    )
    for sent in requests:
        kind = f" ({md_line(sent.kind)})" if sent.kind else ""
        st.markdown(f"`{md_line(sent.method)}` {md_line(short(sent.url, _SHOWN_ACTION))}{kind}")
        if sent.fields:
            st.markdown(
                "\n".join(f"- {md_line(name)}: {md_line(short(value, _SHOWN_FIELD))}" for name, value in sent.fields)
            )


def _approval_picture(approval: Approval, url: str | None) -> None:
    """The screenshot taken when the action was held, with its element outlined (`url`, drawn before the
    box); one line where there is none to show (a dry run, an older log, a removed file)."""
    if url is None:
        with st.container(key=APPROVAL_NO_PICTURE):
            st.caption("No screenshot of the page for this request (a dry run, an older log, or the file is gone).")
        return
    with st.container(key=APPROVAL_PICTURE):
        st.image(url, alt=APPROVAL_PICTURE_ALT)
    if approval.box is None:
        st.caption("The page as the action would find it; it touches no element on screen, so nothing is outlined.")


def _approval_form(ctx: Console, where: Scope, approval: Approval) -> None:
    """Approve or edit on one row, the reason and the two rejections on the next: a rejection fails the
    action with the operator's reason, then the planner recovers at once, or the session pauses."""

    def edited() -> EditAction:
        action = (_value(where, "approval_action") or "").strip()
        if not action:
            raise FormProblem("Write the action to run instead (for example click [12]), or approve the one shown.")
        return EditAction(action=action, node=approval.node_id)

    def rejected(pause: bool) -> Callable[[], Reject]:
        def build() -> Reject:
            reason = (_value(where, "approval_reason") or "").strip()
            if not reason:
                raise FormProblem("Give a reason for the rejection.")
            return Reject(reason=reason, pause=pause)

        return build

    def button(label: str, key: str, kind: str, build: Callable[[], Command], shortcut: str | None) -> None:
        st.form_submit_button(
            label,
            type="primary" if key == "approve_submit" else "secondary",
            key=key,
            on_click=submit,
            args=sending(ctx, where, "approval", build),
            shortcut=shortcut,
            **locked(kind),
        )

    def as_held() -> None:
        """Approve runs the held action, so the field must show it: an edit left there (typed, or
        refused by the runner) would say one action while another runs."""
        shown = (_value(where, "approval_action") or "").strip()
        if shown and shown != approval.action.strip():
            raise FormProblem(
                f"The Action field holds {short(shown, 120)}, not the held action: press Run edited action to "
                f"run it instead, or put back {short(approval.action, 120)} to approve that."
            )

    def approve() -> Approve:
        as_held()
        return Approve(node=approval.node_id)

    def always() -> Approve:
        as_held()
        return Approve(node=approval.node_id, always=True)

    with st.form(where.key("approval"), border=False):  # inside the bordered box: no second border
        st.text_input("Action", value=approval.action, key=where.key("approval_action"))
        with st.container(horizontal=True, gap="small"):
            button("Approve", "approve_submit", "approve", approve, SHORTCUTS["approve"].key)
            if approval.requests:
                rules = ", ".join(dict.fromkeys(r.allowing_rule().spelled() for r in approval.requests))
                button(f"Approve and always {rules}", "approve_always_submit", "approve", always, None)
            button("Run edited action", "edit_action_submit", "edit_action", edited, None)
        st.text_input("Reason (for a rejection)", key=where.key("approval_reason"))
        with st.container(horizontal=True, gap="small"):
            button(
                "Reject and let the planner recover",
                "reject_submit",
                "reject",
                rejected(False),
                SHORTCUTS["reject"].key,
            )
            button("Reject and pause", "reject_pause_submit", "reject", rejected(True), None)


def render_node_edit(ctx: Console, view: SessionView, node: Node | None) -> None:
    """The forms on the selected node (prune, force, inject, edit): drawn beside the tree, in the
    inspector's column, under the node's action bar (`ui.views.node_actions`), which heads them and
    holds the one-click actions. The form the bar opened is shown first; the others keep their order, so
    that at 1600×1000 the prune and inject fields are on screen beside the tree.

    Each form sits in a slot that is always there, in the same place, and the opened one is moved up
    by CSS (`_shown_first`), never by drawing it elsewhere, like the live panel's slots: when the Force
    form was drawn above its old place, Streamlit's page on a loaded machine kept the old copy beside
    the new one after the redraw had ended (two Force forms for 30 s and more, until something else
    redrew the panel)."""
    if view.state.finished:
        st.info(_ENDED)
        render_template_save(ctx, view, node)
        return
    if node is None:
        _last_edit(ctx, view)
        return
    where = scope(view.session_id, node.id)
    forms: list[tuple[str, Callable[[], None]]] = [
        ("prune", lambda: _prune(ctx, view, where, node)),
        ("force", lambda: _force(ctx, view, where, node)),
        ("inject", lambda: _inject(ctx, view, where, node)),
        ("template_inject", lambda: render_template_inject(ctx, view, node)),
        ("edit", lambda: _rewrite(ctx, view, where, node)),
        ("template_save", lambda: render_template_save(ctx, view, node)),
    ]
    _shown_first(opened_form(view.session_id, node.id))
    for name, draw in forms:
        with st.container(key=_slot(name)):  # an empty slot (no Force form on an AND node) is not drawn
            draw()
    _last_edit(ctx, view)


def _slot(form: str) -> str:
    return f"node_form_{form}"


def _shown_first(form: NodeForm | None) -> None:
    """Show the slot of `form` above its siblings: the tab's blocks are flex items of a column, each in
    a layout wrapper, so the wrapper holding the slot gets a lower `order`. The style goes to the page
    on every draw, empty when no form is opened, so the previous one never outlives its draw."""
    st.html(f"<style>{first_in_column(_slot(form)) if form else ''}</style>")


def _last_edit(ctx: Console, view: SessionView) -> None:
    """The latest plan edit an undo would take back, as the nodes it added, removed and changed, and
    the Undo button: enabled only when the undo would apply, with the refusal as its help otherwise."""
    state = view.state
    where = scope(view.session_id)
    with st.container(border=True, key="last_edit"):
        if state.edits:
            event = state.edits[-1]
            applied = cast(CommandApplied, event.payload)
            kind = str(applied.command.get("kind", "edit")).replace("_", " ")
            diff = edit_diff(event.seq, kind, event.node_id, applied.changes)
            at = f" at {event.node_id}" if event.node_id else ""
            st.markdown(f"**Last edit**: {md_line(f'{kind}{at} (event {event.seq})')}")
            if applied.command.get("provenance"):
                st.caption(f"From the {md_line(applied.command['provenance'], 200)}")
            st.markdown("  \n".join(md_line(line) for line in diff_lines(diff)))
        else:
            st.caption("No plan edit to undo.")
        refusal = may_not("undo") or undo_refusal(state)
        st.button(
            "Undo last edit",
            key="undo_btn",
            disabled=refusal is not None,
            help=md(refusal) if refusal else "Take back the last plan edit; none of its nodes has run yet.",
            on_click=submit,
            args=sending(ctx, where, "undo", Undo),
        )
    show_result(view, where, "undo")


def render_settings(ctx: Console, view: SessionView) -> None:
    """The run's own settings, which belong to no node: breakpoints, the task's constraints, the cost cap."""
    if view.state.finished:
        st.info(_ENDED)
        render_template_library(ctx, view.session_id)
        return
    session = scope(view.session_id)
    _breakpoints(ctx, view, session)
    _constraints(ctx, view, session)
    _budget(ctx, view, session)
    render_template_library(ctx, view.session_id)


def _breakpoints(ctx: Console, view: SessionView, where: Scope) -> None:
    current = sorted(view.state.config.breakpoints)
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
            **locked("breakpoints"),
            on_click=submit,
            args=sending(
                ctx, where, "breakpoints", lambda: SetBreakpoints(breakpoints=list(_value(where, "bp_choice") or ()))
            ),
        )
    show_result(view, where, "breakpoints")


def _budget(ctx: Console, view: SessionView, where: Scope) -> None:
    state = view.state
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
            **locked("budget"),
            on_click=submit,
            args=sending(ctx, where, "budget", lambda: SetBudget(max_cost_usd=_value(where, value_key) or None)),
        )
    show_result(view, where, "budget")


def _constraints(ctx: Console, view: SessionView, where: Scope) -> None:
    current = view.state.constraints or []
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
            **locked("constraints"),
            on_click=submit,
            args=sending(
                ctx, where, "constraints", lambda: SetConstraints(constraints=_lines(_value(where, text_key)))
            ),
        )
    show_result(view, where, "constraints")


def _scores(text: str, count: int) -> list[float]:
    """The scores typed for injected OR alternatives; `FormProblem` says what is wrong with them."""
    try:
        scores = [float(part) for part in text.split(",")]
    except ValueError:
        raise FormProblem("Scores must be numbers between 0 and 1, comma-separated.") from None
    if any(not 0.0 <= score <= 1.0 for score in scores):
        raise FormProblem("Scores must be numbers between 0 and 1, comma-separated.")
    if len(scores) != count:
        raise FormProblem(f"Give one score per alternative ({count}), or none.")
    return scores


_UNDER, _BEFORE, _AFTER = "under", "before", "after"


def _inject(ctx: Console, view: SessionView, where: Scope, node: Node) -> None:
    """Inject under the node (at a chosen place among its children), or beside it: before or after it
    among its parent's children, which is an ordinary inject under the parent."""
    state = view.state
    children = state.tree.children(node)
    parent = state.tree.parent(node)
    beside: dict[str, tuple[str, int]] = {}  # where a sibling goes: its parent and index there
    if parent is not None and parent.status not in REMOVED:
        index = parent.children.index(node.id)
        beside = {_BEFORE: (parent.id, index), _AFTER: (parent.id, index + 1)}
    # An action has no sub-goals of its own, and a pruned or deleted node takes none until reopened.
    under = node.type is not NodeType.ACTION and node.status not in REMOVED
    places = [_UNDER, *beside] if under else list(beside)
    if not places:
        return
    alternatives = (under and node.type in (NodeType.OR, NodeType.UNKNOWN)) or (
        parent is not None and parent.type is NodeType.OR
    )
    title = "Inject alternatives (one per line)" if node.type is NodeType.OR else "Inject sub-goals (one per line)"
    with st.form(where.key("inject")):
        if len(places) > 1:  # the choice of place heads the form: it takes no line of its own
            st.radio(
                title,
                places,
                format_func=lambda place: f"{place} {node.id}",
                horizontal=True,
                key=where.key("inject_where"),
            )
        else:
            st.markdown(title)
        st.text_area("Sub-goals", key=where.key("inject_goals"), height=90, label_visibility="collapsed")
        if under:
            positions = ["at the end", *(f"before {c.id} · {short(c.description, 40)}" for c in children)]
            st.selectbox(
                "Position" if len(places) == 1 else f"Position under {node.id}",
                range(len(positions)),
                format_func=positions.__getitem__,
                key=where.key("inject_position"),
            )
        if node.type is NodeType.UNKNOWN:
            ask_meaning(where, "inject_meaning")
        if alternatives:
            st.text_input(
                "Scores for OR alternatives, comma-separated (default 1.0 each: tried before the model's)",
                key=where.key("inject_scores"),
            )

        def build() -> Inject:
            goals = _lines(_value(where, "inject_goals"))
            if not goals:
                raise FormProblem("Write at least one sub-goal, one per line, before pressing Inject.")
            place = _value(where, "inject_where") or places[0]
            scores_text = (_value(where, "inject_scores") or "").strip() if alternatives else ""
            scores = _scores(scores_text, len(goals)) if scores_text else None
            if place in beside:
                parent_id, index = beside[place]
                return Inject(parent=parent_id, goals=goals, position=index, scores=scores)
            position = _value(where, "inject_position") or 0
            unplanned = meaning(where, "inject_meaning") if node.type is NodeType.UNKNOWN else {}
            return Inject.model_validate(
                {
                    "parent": node.id,
                    "goals": goals,
                    "position": None if position == 0 else position - 1,
                    "scores": scores,
                    **unplanned,
                }
            )

        st.form_submit_button(
            "Inject",
            key="inject_submit",
            **locked("inject"),
            on_click=submit,
            args=sending(ctx, where, "inject", build, ("inject_goals", "inject_scores")),
        )
    show_result(view, where, "inject")


def _prune(ctx: Console, view: SessionView, where: Scope, node: Node) -> None:
    with st.form(where.key("prune")), st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        st.text_input(f"Prune {md_line(node.id)}: reason", key=where.key("prune_reason"))  # its button beside it

        def build() -> Prune:
            reason = (_value(where, "prune_reason") or "").strip()
            if not reason:
                raise FormProblem("Give a reason for the prune: it is recorded with the node.")
            return Prune(node=node.id, reason=reason)

        st.form_submit_button(
            "Prune",
            key="prune_submit",
            on_click=submit,
            args=sending(ctx, where, "prune", build, ("prune_reason",)),
            **locked("prune"),
        )
    show_result(view, where, "prune")


def _rewrite(ctx: Console, view: SessionView, where: Scope, node: Node) -> None:
    """The description form of a node the run may still enter; a finished node gets one line saying why
    there is none, and what would make one (a form that silently went away read as a fault)."""
    if node.status in CLOSED:
        st.caption(md_line(_finished(node)))
        return
    text_key = "edit_description_" + hashlib.sha1(node.description.encode()).hexdigest()[:8]
    with st.form(where.key("edit")):
        st.text_area("Description", value=node.description, key=where.key(text_key), height=70)
        st.checkbox("Expand it again (drops its open children)", key=where.key("edit_reexpand"))

        def build() -> Edit:
            description = (_value(where, text_key) or "").strip()
            if not description:
                raise FormProblem("The description cannot be empty: write what the node should achieve.")
            return Edit(node=node.id, description=description, reexpand=bool(_value(where, "edit_reexpand")))

        st.form_submit_button(
            "Save description",
            key="edit_submit",
            on_click=submit,
            args=sending(ctx, where, "edit", build),
            **locked("edit"),
        )
    show_result(view, where, "edit")


def _finished(node: Node) -> str:
    """Why a finished node's description cannot be edited: a pruned or deleted node can be reopened (the
    Reopen button is above), a node that succeeded cannot."""
    if node.status in REOPENABLE:
        return f"{node.id} is finished ({node.status.value}): reopen it first (Reopen, above) to edit its description."
    return (
        f"{node.id} is finished ({node.status.value}): its description stays as it ran; "
        "inject a sub-goal beside it to do more."
    )


def _force(ctx: Console, view: SessionView, where: Scope, node: Node) -> None:
    """Run an untried alternative of an OR node next; no form for another node, or once none is left."""
    state = view.state
    untried = [c for c in state.tree.children(node) if c.status is Status.UNVISITED]
    if node.type is not NodeType.OR or not untried:
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
            **locked("force"),
            on_click=submit,
            args=sending(ctx, where, "force", lambda: Force(node=node.id, child=_value(where, "force_child"))),
        )
    show_result(view, where, "force")
