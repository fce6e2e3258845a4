"""Everything about the selected node, and the run's notes, answer and latest page."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from planner.events import Event, Kind
from planner.state import SessionState
from ui.text import md, md_line
from ui.views.live import Live

__all__ = ["render_inspector", "render_run_panel"]


def _screenshot(path: str | None, caption: str) -> None:
    """`caption` must come escaped (`md_line`): Streamlit renders image captions as Markdown."""
    if path and Path(path).is_file():
        st.image(path, caption=caption)
    else:
        st.caption("No screenshot for this step.")


def render_inspector(follower: Live, node_id: str | None) -> None:
    state = follower.state
    node = state.tree.get(node_id) if node_id else None
    if node is None:
        st.caption("Select a node in the tree.")
        return
    st.markdown(
        f"**{md(node.id)}** · {node.type.value} · **{node.status.value}** · made by {node.origin.value}"
        + (" (protected)" if node.protected else "")
        + f" · revisions {node.revisions}"
        + (f" · score {node.score:g}" if node.score is not None else "")
    )
    st.text(node.description)
    if node.reason:
        st.markdown(f"Reason: {md(node.reason)}")
    if node.action:
        st.markdown("Action:")
        st.code(node.action, language=None)
    planned = state.proposals.get(node.id)
    if planned:
        st.markdown("Planned ahead (runs without its own model call while this page stays current):")
        st.code(planned, language=None)
    if node.url:
        st.caption("Planned on")
        st.text(node.url)
    _node_events(follower, node.id)


def _node_events(follower: Live, node_id: str) -> None:
    events = follower.by_node.get(node_id, [])
    for event in (e for e in events if e.kind is Kind.NODE_EXPANDED and e.data.get("note")):
        st.caption(f"Expansion: {md(event.data['note'])}")
    executed = [e for e in events if e.kind is Kind.ACTION_EXECUTED]
    for event in executed[-1:]:
        data = event.data
        outcome = "succeeded" if data["ok"] else f"failed: {data.get('error')}"
        st.markdown(f"Outcome: {md(outcome)}")
        st.text(
            f"Page after: {data.get('url') or ''} ({data.get('obs_chars', 0):,} chars observed of {data.get('html_chars', 0):,} HTML)"
        )
        _screenshot(data.get("screenshot"), f"after {md_line(data['action'])}")
    for event in (e for e in events if e.kind is Kind.OBSERVED):
        st.markdown("Observation summary:")
        st.text(event.data.get("summary", ""))
        if event.data.get("progress"):
            st.caption(f"Progress: {md(event.data['progress'])}")
    calls = [e for e in events if e.kind is Kind.MODEL_CALL]
    tokens = sum(
        (e.data.get("usage") or {}).get("input_tokens", 0) + (e.data.get("usage") or {}).get("output_tokens", 0)
        for e in calls
    )
    cost = sum((e.data.get("usage") or {}).get("cost_usd", 0.0) for e in calls)
    st.markdown(f"**Model calls: {len(calls)}**" + (f" · {tokens:,} tokens · ${cost:.4f}" if tokens else ""))
    for event in calls:
        _model_call(event)


def _model_call(event: Event) -> None:
    data = event.data
    title = (
        f"#{event.seq} {md_line(data['operator'])} (attempt {md_line(data['attempt'])}) — "
        f"{'ok' if data['ok'] else 'error'} · {data.get('latency_ms', 0):.0f} ms"
    )
    with st.expander(title):  # an expander's title is Markdown
        if data.get("error"):
            st.markdown(f"Error: {md(data['error'])}")
        usage = data.get("usage") or {}
        if usage:
            st.caption(md_line(", ".join(f"{key} {value}" for key, value in usage.items())))
        if data.get("prompt"):
            st.markdown("Prompt")
            st.code(data["prompt"], language=None)
        st.markdown("Response")
        st.code(
            json.dumps(data.get("output"), indent=2, ensure_ascii=False)
            if data.get("output")
            else (data.get("raw") or ""),
            language="json",
        )


def render_run_panel(state: SessionState) -> None:
    _constraints(state)
    _candidates(state)
    if state.final_answer is not None or state.finished:
        st.markdown("**Final answer**")
        st.text(state.final_answer or "(none)")
    st.markdown(f"**Notes ({len(state.notes)})**")
    for note in state.notes:
        st.markdown(f"- {md(note)}")
    if state.progress:
        st.markdown("**Progress**")
        st.text(state.progress)
    if state.feedback and not state.finished:
        st.caption(f"Next: {md(state.feedback)}")
    st.markdown("**Current page**")
    st.text(state.url or "")
    _screenshot(state.last_screenshot, "latest browser screenshot")


def _candidates(state: SessionState) -> None:
    if not state.candidates:
        return
    qualifying = sum(1 for c in state.candidates.values() if c["verdict"] == "qualifies")
    st.markdown(f"**Candidates ({qualifying} of {len(state.candidates)} qualify)**")
    table = pd.DataFrame(
        [
            {
                "verdict": c["verdict"],
                "item": c["name"],
                "fails": ", ".join(c["unmet"]),
                "seen": "; ".join(f"{key}: {value}" for key, value in c["fields"].items()),
                "at": c.get("seen_at") or "",
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
        st.caption("None stated. Add them under Edit plan to hold the planner to them.")
    for line in state.constraints or ():
        st.markdown(f"- {md(line)}")
