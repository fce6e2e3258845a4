"""The always-visible bar: task, what the agent is doing now, and the run controls."""

from __future__ import annotations

import streamlit as st

from planner.commands import Pause, Resume, Step, Stop
from planner.state import RunStatus
from sessions.client import Outcome, OutcomeKind, SessionView
from sessions.client.markdown import md, md_line
from ui.access import refusal
from ui.commands import alert, faded, first_drawn, new_command_id, send
from ui.context import Console
from ui.shortcuts import SHORTCUTS, render_help
from ui.status import outcome, status_line, worker_name

__all__ = ["FLASH", "STATUS_CHARS", "render_controls", "render_status"]

FLASH = "_flash_controls"
"""Session state: (session id, outcome, when its answer was first drawn) of the last control pressed."""
STATUS_CHARS = 300
"""The status line quotes actions and reasons; past this it is cut (the inspector has them whole)."""


def _flash(view: SessionView) -> None:
    """The answer to the last control pressed, and only on the session it was pressed for: "queued"
    until the view finds it handled, then its answer. An answer with a warning stays, like a refusal,
    until the next press."""
    flash = st.session_state.get(FLASH)
    if not flash or flash[0] != view.session_id:
        return
    outcome = flash[1].settled(view.handled)
    if faded(outcome, flash[2]):
        del st.session_state[FLASH]
        return
    st.session_state[FLASH] = (view.session_id, outcome, first_drawn(outcome, flash[2]))
    alert(outcome)(md_line(outcome.text, STATUS_CHARS))


_COMMANDS: dict[str, type[Pause | Resume | Step | Stop]] = {
    "resume": Resume,
    "pause": Pause,
    "step": Step,
    "stop": Stop,
}


def _press(ctx: Console, session_id: str, verb: str, orphaned: bool, command_id: str) -> None:
    """A control's callback: sends the command and returns at once (see `ui.commands`)."""
    if verb == "resume" and orphaned and refusal(verb) is None:  # else `send` gives the refusal
        ctx.client.restart(session_id)
        outcome = Outcome(OutcomeKind.APPLIED, "runner restarted; the session continues")
    else:
        outcome = send(ctx, session_id, _COMMANDS[verb](), command_id)
    st.session_state[FLASH] = (session_id, outcome, None)


def render_controls(ctx: Console, view: SessionView) -> None:
    """Start/resume, pause, step and stop, enabled by what the run can do right now, and the help on
    their keys (`ui.shortcuts`; a disabled button's key does nothing). One row of buttons as wide as
    their labels, not columns of a fixed share: at 1280 px beside the sidebar a share cut "Resume" to
    "R…"."""
    state = view.state
    status = state.status
    orphaned = status is RunStatus.RUNNING and not view.runner.alive
    can_resume = status in (RunStatus.PAUSED, RunStatus.STOPPED) or orphaned
    resume, pause, step = SHORTCUTS["resume"].key, SHORTCUTS["pause"].key, SHORTCUTS["step"].key
    verbs = [
        ("Resume" if state.steps else "Start", ":material/play_arrow:", "resume", resume, not can_resume),
        ("Pause", ":material/pause:", "pause", pause, status is not RunStatus.RUNNING),
        (
            "Step",
            ":material/skip_next:",
            "step",
            step,
            status not in (RunStatus.PAUSED, RunStatus.STOPPED, RunStatus.RUNNING),
        ),
        ("Stop", ":material/stop:", "stop", None, state.finished or status is RunStatus.STOPPED),
    ]
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    for label, icon, verb, shortcut, disabled in verbs:
        why_not = refusal(verb)
        row.button(
            label,
            icon=icon,
            key=f"ctl_{verb}",
            disabled=disabled or why_not is not None,
            help=md(why_not) if why_not else None,
            width="content",
            on_click=_press,
            args=(ctx, view.session_id, verb, orphaned, new_command_id()),
            shortcut=shortcut,
        )
    with row:
        render_help()
        _flash(view)


def _held_by(view: SessionView) -> str:
    """Which runner holds a running session (its lease holder's `host:pid`: with workers, the worker),
    or that it waits for one to take it."""
    if view.state.status is not RunStatus.RUNNING or not view.runner.here:
        return ""  # not running, or the status line already says no runner is active
    worker = worker_name(view.runner.owner)
    return f" · run by {md(worker)}" if worker else " · waiting for a runner to take it"


def render_status(view: SessionView) -> None:
    state = view.state
    alive = view.runner.alive
    word, icon = outcome(state.status.value, state.cause.value if state.cause else None)
    metrics = state.metrics
    cap = state.config.max_cost_usd
    line = (
        f"**{icon} {md(word)}** — {md_line(status_line(state, alive), STATUS_CHARS)}  \n"
        + (f"started by {md_line(state.started_by, 80)} · " if state.started_by else "")
        + f"step {state.steps} · {len(state.tree)} nodes · {metrics.actions} actions · "
        f"{metrics.model_calls} model calls · event {state.seq}"
        + (
            f" · {metrics.input_tokens + metrics.output_tokens:,} tokens · ${metrics.cost_usd:.4f}"
            if metrics.input_tokens
            else ""
        )
        + (f" of ${cap:g}" if cap and metrics.input_tokens else f" · cost cap ${cap:g}" if cap else "")
    )
    # A failed run is red at a glance; every other status is the ordinary status line.
    (st.error if state.status is RunStatus.FAILED else st.markdown)(line + _held_by(view))
    check = state.answer_check
    if check is not None and check.passed:
        st.success("Answer check: met (it names every string the task's answer must contain).")
    elif check is not None:
        st.warning(f"Answer check: not met — missing {md_line(', '.join(check.missing), STATUS_CHARS)}.")
    if view.pending:
        queued = ", ".join(md(command.payload.get("kind", "?")) for command in view.pending)
        st.caption(f"Queued for the next step boundary: {queued}")
