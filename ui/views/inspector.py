"""Everything about the selected node, and the run's notes, answer and latest page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pandas as pd
import streamlit as st

from planner.events import ActionExecuted, ApprovalRequested, ModelCalled, NodeExpanded, Observed
from planner.state import RunStatus, SessionState
from planner.tree import ROOT_ID, Origin, Status
from sessions.client import SessionView
from sessions.client.markdown import md, md_line, short
from ui.context import Console
from ui.url import select
from ui.views.counterfactual import render_reask
from ui.views.page_view import screenshot_url
from ui.views.whole import show_line, show_text, show_whole

__all__ = ["render_inspector", "render_run_panel"]

_SHOWN_CHARS = 600
"""A description, reason, action or final answer longer than this is cut, with the whole of it under an
expander: a 10,000-character text pushed the forms beside it thousands of pixels down."""
_NOTE_CHARS = 300
"""Each note is cut to one line of this many characters; all of them whole are under one expander."""
_PAGE_TEXT_CHARS = 20_000
"""Page text longer than this is cut. The browser hands the agent at most about 6,000 characters a page
(`BrowserEnvironment.observation_budget`), so what the agent read is shown whole."""


def _screenshot(path: str | None, caption: str, alt: str) -> None:
    """`caption` must come escaped (`md_line`): Streamlit renders image captions as Markdown."""
    if path and Path(path).is_file():
        st.image(screenshot_url(path), caption=caption, alt=alt)
    else:
        st.caption("No screenshot for this step.")


def _code(text: str, what: str) -> None:
    """An action as code, cut like the other texts (an operator's edit or a model can make it long)."""
    cut = short(text, _SHOWN_CHARS)
    st.code(cut, language=None)
    show_whole(text, cut, what)


def render_inspector(ctx: Console, view: SessionView, node_id: str | None) -> None:
    state = view.state
    node = state.tree.get(node_id) if node_id else None
    if node is None:
        st.caption("Select a node in the tree.")
        return
    status = f"**{node.status.value}**"
    if node.id in state.failed:  # the root's prune after its failure is the run's end, not news
        taken_out = node.status is not Status.FAIL and node.id != ROOT_ID
        status = "**✗ FAILED**" + (f", then {status}" if taken_out else "")
    made, edited = state.made_by.get(node.id), state.edited_by.get(node.id)
    maker = f"operator {md(made)}" if node.origin is Origin.OPERATOR and made else node.origin.value
    edit = node.edited and (node.origin is not Origin.OPERATOR or (edited is not None and edited != made))
    st.markdown(
        f"**{md(node.id)}** · {node.type.value} · {status} · made by {maker}"
        + (f" · ✎ edited by {md(edited) if edited else 'the operator'}" if edit else "")
        + f" · revisions {node.revisions}"
        + (f" · score {node.score:g}" if node.score is not None else "")
        + (f" · from template {md(str(node.template))}" if node.template else "")
    )
    show_text(node.description, _SHOWN_CHARS, "description")
    for earlier, what in ((node.earlier, "descriptions"), (node.earlier_actions, "actions")):
        if earlier:
            with st.expander(f"Earlier {what} ({len(earlier)}), oldest first"):
                for text in earlier:
                    st.text(short(text, _SHOWN_CHARS))
    if node.reason:
        show_line("Reason: ", node.reason, _SHOWN_CHARS, "reason")
    if node.action:
        st.markdown("Action:")
        _code(node.action, "action")
    planned = state.proposals.get(node.id)
    if planned:
        st.markdown("Planned ahead (runs without its own model call while this page stays current):")
        _code(planned, "planned action")
    if node.url:
        st.caption("Planned on")
        st.text(short(node.url, _SHOWN_CHARS))
    _node_events(ctx, view, node.id)


def _node_events(ctx: Console, view: SessionView, node_id: str) -> None:
    events = view.by_node.get(node_id, [])
    payloads = [event.payload for event in events]
    for expanded in (p for p in payloads if isinstance(p, NodeExpanded) and p.note):
        st.caption(f"Expansion: {md_line(expanded.note or '', _SHOWN_CHARS)}")
    executed = [p for p in payloads if isinstance(p, ActionExecuted)]
    for run in executed[-1:]:
        show_line("Outcome: ", "succeeded" if run.ok else f"failed: {run.error}", _SHOWN_CHARS, "outcome")
        st.text(
            f"Page after: {short(run.url or '', 200)} ({run.obs_chars:,} chars observed of {run.html_chars:,} HTML)"
        )
        _screenshot(run.screenshot, f"after {md_line(run.action)}", "browser screenshot after the action")
        _page_text(run.observation, f"page_text_{node_id}")
    for observed in (p for p in payloads if isinstance(p, Observed)):
        st.markdown("Observation summary:")
        show_text(observed.summary, _SHOWN_CHARS, "observation summary")
        if observed.progress:
            st.caption(f"Progress: {md_line(observed.progress, _SHOWN_CHARS)}")
    for asked in (p for p in payloads if isinstance(p, ApprovalRequested) and p.requests):
        held = "; ".join(f"{sent.method} {sent.url}" for sent in asked.requests)
        show_line("Held for approval: ", held, _SHOWN_CHARS, "held requests")
    calls = [e for e in events if isinstance(e.payload, ModelCalled)]
    usages = [cast(ModelCalled, e.payload).usage for e in calls]
    tokens = sum(usage.get("input_tokens", 0) + usage.get("output_tokens", 0) for usage in usages)
    cost = sum(usage.get("cost_usd", 0.0) for usage in usages)
    st.markdown(f"**Model calls: {len(calls)}**" + (f" · {tokens:,} tokens · ${cost:.4f}" if tokens else ""))
    for event in calls:
        _model_call(event.seq, cast(ModelCalled, event.payload))
    render_reask(ctx, view, node_id)


def _page_text(text: str | None, key: str) -> None:
    """The page text the agent read, as the model's prompts quote it: the only view of what the page said
    when the model's prompt is not recorded (the offline model's), and what a simulated operator's
    page rules match (`demo.operator_sim`). Page text, so `st.text`, never Markdown; built only
    while open, like a model call's prompt."""
    if not text:
        return
    with st.expander(f"Page text the agent read ({len(text):,} characters)", key=key, on_change="rerun") as shown:
        if not shown.open:
            return
        if len(text) > _PAGE_TEXT_CHARS:
            st.caption(f"The first {_PAGE_TEXT_CHARS:,} characters.")
        st.text(text[:_PAGE_TEXT_CHARS])


def _model_call(seq: int, call: ModelCalled) -> None:
    title = (
        f"#{seq} {md_line(call.question)} (attempt {md_line(str(call.attempt))}) — "
        f"{'ok' if call.ok else 'error'} · {call.latency_ms:.0f} ms"
    )
    # An expander's title is Markdown. Its body is built only while it is open: Streamlit draws a closed
    # expander's contents all the same, and highlighting every call's prompt and response again on each
    # 0.75 s redraw of a live run was a fifth of the browser's work. Open or closed is kept on the
    # server (the key), so a redraw never folds it away.
    with st.expander(title, key=f"model_call_{seq}", on_change="rerun") as shown:
        if not shown.open:
            return
        if call.error:
            st.markdown(f"Error: {md(call.error)}")
        if call.usage:
            st.caption(md_line(", ".join(f"{key} {value}" for key, value in call.usage.items())))
        if call.effort:
            st.caption(f"Effort: {md_line(call.effort)}")
        if call.thinking:
            # Why the model answered as it did (a thinking model's summary): an operator who sees why a
            # decomposition was chosen can correct it faster. Model text, so it goes through `md`.
            st.markdown("Thinking (summary)")
            for summary in call.thinking:
                st.markdown(md(summary))
        if call.prompt:
            st.markdown("Prompt")
            st.code(call.prompt, language=None)
        st.markdown("Response")
        st.code(
            json.dumps(call.output, indent=2, ensure_ascii=False) if call.output else (call.raw or ""),
            language="json",
        )


def render_run_panel(state: SessionState) -> None:
    """The rest of the Task & answer tab, under the answer and its verdict (`ui.views.verdict`)."""
    _diagnosis(state)
    _constraints(state)
    _request_rules(state)
    _candidates(state)
    st.markdown(f"**Notes ({len(state.notes)})**")
    for note in state.notes:
        st.markdown(f"- {md_line(note, _NOTE_CHARS)}")
    if any(len(note) > _NOTE_CHARS for note in state.notes):
        show_whole("\n".join(state.notes), "", "notes")
    if state.progress:
        st.markdown("**Progress**")
        show_text(state.progress, _SHOWN_CHARS, "progress")
    if state.feedback and not state.finished:
        st.caption(f"Next: {md_line(state.feedback, _SHOWN_CHARS)}")
    st.markdown("**Current page**")
    st.text(short(state.url or "", _SHOWN_CHARS))
    _page_text(state.page_text, "current_page_text")
    _screenshot(state.last_screenshot, "latest browser screenshot", "latest browser screenshot")


def _request_rules(state: SessionState) -> None:
    """The session's request rules (`planner.effects`), the first that matches deciding: where an
    operator sees what "always allow" added, and what a bundled site allows of itself."""
    rules = state.config.request_rules
    st.markdown(f"**Request rules ({len(rules)})**")
    for rule in rules:
        st.markdown(f"- `{md_line(rule.spelled())}`")
    st.caption(
        ("Otherwise, " if rules else "None: ")
        + "every request a page sends that can change state on a server (not GET, HEAD or OPTIONS; every "
        "WebSocket message) waits for approval."
    )


def _diagnosis(state: SessionState) -> None:
    """Why the run failed (`python -m sessions diagnose`), each critical step a button to its node."""
    stored = state.diagnosis
    if stored is None:
        if state.status is RunStatus.FAILED:
            st.caption(
                "No diagnosis yet: `python -m sessions diagnose SESSION_ID` writes one (offline rules by default)."
            )
        return
    if stored.diagnosis is None:
        st.warning(f"Diagnosis by {md_line(stored.model, 80)} failed: {md_line(stored.error or 'no reason', 400)}")
        return
    found = stored.diagnosis
    st.markdown(
        f"**Diagnosis** ({md_line(stored.model, 80)}): **{md(found.failure_category.value.replace('_', ' '))}**, "
        f"confidence {found.confidence} of 5"
    )
    show_text(found.root_cause, _SHOWN_CHARS, "root cause")
    for index, step in enumerate(found.critical_steps):
        where = f" at {step.node_id}" if step.node_id else ""
        st.markdown(
            f"- step {step.step_number}{md_line(where)}: {md_line(step.what_happened, 300)} — {md_line(step.what_went_wrong, 300)}"
        )
        if step.node_id and step.node_id in state.tree.nodes:
            st.button(f"Show {step.node_id}", key=f"diagnosis_node_{index}", on_click=select, args=(step.node_id,))
    st.markdown(f"What should have been done: {md(found.what_should_have_been_done)}")


def _candidates(state: SessionState) -> None:
    if not state.candidates:
        return
    qualifying = sum(1 for c in state.candidates.values() if c.verdict == "qualifies")
    st.markdown(f"**Candidates ({qualifying} of {len(state.candidates)} qualify)**")
    table = pd.DataFrame(
        [
            {
                "verdict": c.verdict,
                "item": c.name,
                "fails": ", ".join(c.unmet),
                "seen": "; ".join(f"{key}: {value}" for key, value in c.fields.items()),
                "at": c.seen_at or "",
            }
            for c in state.candidates.values()
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")


def _constraints(state: SessionState) -> None:
    st.markdown("**Constraints**")
    if state.constraints is None:
        st.caption("Not extracted yet: the run reads them from the task first.")
    elif not state.constraints:
        st.caption("None stated. Add them under Run settings to hold the planner to them.")
    for line in state.constraints or ():
        st.markdown(f"- {md(line)}")
