"""The always-visible bar: task, what the agent is doing now, and the run controls."""

from __future__ import annotations

import time

import streamlit as st

from planner.state import RunStatus, SessionState
from sessions.runner import STALE_AFTER
from ui.commands import send
from ui.context import Console
from ui.status import STATUS_ICONS, status_line
from ui.text import md

__all__ = ["render_controls", "render_status"]


def _flash(key: str) -> None:
    message = st.session_state.pop(key, None)
    if message:
        (st.success if message[0] else st.error)(md(message[1]))


def render_controls(ctx: Console, session_id: str, state: SessionState) -> None:
    """Start/resume, pause, step and stop, enabled by what the run can do right now."""
    cols = st.columns([1, 1, 1, 1, 4])
    status = state.status
    orphaned = status is RunStatus.RUNNING and not _runner_alive(ctx, session_id)
    can_resume = status in (RunStatus.PAUSED, RunStatus.STOPPED) or orphaned
    verbs = [
        (cols[0], "Resume" if state.steps else "Start", ":material/play_arrow:", "resume", not can_resume),
        (cols[1], "Pause", ":material/pause:", "pause", status is not RunStatus.RUNNING),
        (
            cols[2],
            "Step",
            ":material/skip_next:",
            "step",
            status not in (RunStatus.PAUSED, RunStatus.STOPPED, RunStatus.RUNNING),
        ),
        (cols[3], "Stop", ":material/stop:", "stop", state.finished or status is RunStatus.STOPPED),
    ]
    for column, label, icon, verb, disabled in verbs:
        if column.button(label, icon=icon, key=f"ctl_{verb}", disabled=disabled, width="stretch"):
            if verb == "resume" and orphaned:
                ctx.pool.ensure_running(session_id)
                st.session_state["flash_controls"] = (True, "runner restarted; the session continues")
                st.rerun(scope="fragment")
            outcome = send(ctx, session_id, {"kind": verb})
            st.session_state["flash_controls"] = (outcome.ok, outcome.message)
            st.rerun(scope="fragment")
    with cols[4]:
        _flash("flash_controls")


def _runner_alive(ctx: Console, session_id: str) -> bool:
    """A runner here, or another process holding a fresh lease (a CLI run, another console)."""
    if ctx.pool.running(session_id):
        return True
    info = ctx.store.session(session_id)
    return (
        info.runner_pid is not None and info.heartbeat_at is not None and time.time() - info.heartbeat_at < STALE_AFTER
    )


def render_status(ctx: Console, session_id: str, state: SessionState) -> None:
    alive = _runner_alive(ctx, session_id)
    icon = STATUS_ICONS.get(state.status.value, "")
    metrics = state.metrics
    cap = state.config.max_cost_usd
    st.markdown(
        f"**{icon} {md(state.status.value.replace('_', ' '))}** — {md(status_line(state, alive))}  \n"
        f"step {state.steps} · {len(state.tree)} nodes · {metrics.actions} actions · "
        f"{metrics.model_calls} model calls · event {state.seq}"
        + (
            f" · {metrics.input_tokens + metrics.output_tokens:,} tokens · ${metrics.cost_usd:.4f}"
            if metrics.input_tokens
            else ""
        )
        + (f" of ${cap:g}" if cap and metrics.input_tokens else f" · cost cap ${cap:g}" if cap else "")
    )
    pending = ctx.store.pending(session_id)
    if pending:
        queued = ", ".join(md(command.payload.get("kind", "?")) for command in pending)
        st.caption(f"Queued for the next step boundary: {queued}")
