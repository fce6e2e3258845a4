"""Sending operator commands from the console and reporting what the runner made of them.

A press barely waits for the runner. Its callback queues the command, makes sure a runner will apply
it, and gives the runner `QUICK_ANSWER` seconds: a step of a dry run, or a plan edit at a boundary,
is answered within that, and the redraw after the press shows its effect. Otherwise the callback
returns with a "queued" answer, and each redraw after that asks the log once whether the command has
been handled (`settle`), showing "applied" or the engine's reason as soon as it has. A callback that
waited for long would hold the page: Streamlit cannot draw anything while it runs, and the live
panel's timer would ask for a redraw meanwhile, which restarts the run with the press still pending
and runs the callback again (a Step pressed once ran two steps, when the wait was 2 s).

That replay can still happen when the queue's write is slow on a loaded machine, so one press sends
one command: a real second press comes from a page drawn after the first, and an identical command
from the same tab before the page has been drawn since (`drawn`) is the replay. It gets the first
one's answer and is not queued again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from sessions.client.commands import CommandOutcome, command_outcome, queue_command, wait_for_outcome
from sessions.errors import InvalidCommand
from sessions.store import EventStore, SessionFinished
from ui.access import AccessRefused, current
from ui.context import Console

__all__ = [
    "APPLIED_SECONDS",
    "FORM_NAMES",
    "QUICK_ANSWER",
    "Outcome",
    "alert",
    "drawn",
    "faded",
    "first_drawn",
    "send",
    "settle",
]

_LAST = "_last_command"
"""Session state: (session id, payload, outcome, drawn since) of the tab's last command."""

QUICK_ANSWER = 0.4
"""Seconds a press waits for the runner's answer before it shows "queued" instead."""
APPLIED_SECONDS = 6.0
"""How long a plain "applied" stays beside the control or form that sent it; a refusal or an answer
with a warning stays until the next press."""

FORM_NAMES = {
    "budget": "cost cap",
    "breakpoint": "node breakpoint",
    "edit": "description edit",
    "edit_action": "edited action",
    "approve": "approval",
    "reject": "rejection",
}
"""What the console calls a command where its kind is not already the form's or the button's name."""


@dataclass(frozen=True)
class Outcome:
    """`applied`, `rejected` (with the engine's reason), `queued` (not handled yet) or `invalid` (not queued:
    malformed, or the session has ended). A queued outcome names its command, for `settle`."""

    result: str
    message: str
    session_id: str = ""
    command_id: str = ""
    after: int = 0
    """The session's last event number before the command was queued: its answer comes later."""
    name: str = ""
    warning: str = ""
    """What an applied command could not change, in the engine's words ("already ran in the browser: …")."""

    @property
    def ok(self) -> bool:
        return self.result in ("applied", "queued")

    @property
    def text(self) -> str:
        """The answer as the operator reads it: the message, then the engine's warning if it gave one."""
        return f"{self.message} — {self.warning}" if self.warning else self.message


def faded(outcome: Outcome, shown: float | None) -> bool:
    """Whether `outcome`, first drawn at `shown` (`time.monotonic()`; None: not drawn yet), has been on
    the page long enough to go (`APPLIED_SECONDS`). The clock starts at the first draw, not at the
    answer: a slow redraw (a loaded machine, a big tree) must not take the answer away before the
    operator could see it."""
    return (
        outcome.result == "applied"
        and not outcome.warning
        and shown is not None
        and time.monotonic() - shown > APPLIED_SECONDS
    )


def first_drawn(outcome: Outcome, shown: float | None) -> float | None:
    """When `outcome` was first drawn: `shown` if it was, now if it is being drawn as an answer for the
    first time, None while it is still queued."""
    if shown is not None or outcome.result == "queued":
        return shown
    return time.monotonic()


def alert(outcome: Outcome) -> Callable[..., object]:
    """How an answer is drawn: queued as news, applied as success, applied with a warning as a warning
    (the operator has to know what the command did not undo), refused as an error."""
    if outcome.result == "queued":
        return st.info
    if not outcome.ok:
        return st.error
    return st.warning if outcome.warning else st.success


def send(ctx: Console, session_id: str, payload: dict[str, Any]) -> Outcome:
    """Queue a command and make sure a runner will apply it; the answer names the command as the
    console's form does ("cost cap applied", not "budget").

    Every console command passes here, so this is where it is signed with the operator at the page
    (`by`) and where one they may not send is refused, unqueued (`ui.access`): a disabled button is a
    courtesy, this is the rule."""
    try:
        signed = current().sign(payload)
    except AccessRefused as refused:
        return Outcome("invalid", str(refused))
    if isinstance(signed, str):
        return Outcome("invalid", signed)
    payload = signed
    last = st.session_state.get(_LAST)
    if last and last[:2] == (session_id, payload) and not last[3]:
        return last[2]
    outcome = _send(ctx, session_id, payload)
    st.session_state[_LAST] = (session_id, payload, outcome, False)
    return outcome


def drawn() -> None:
    """The page (or the live panel) has been drawn since the last command: the next one is a new press."""
    last = st.session_state.get(_LAST)
    if last and not last[3]:
        st.session_state[_LAST] = (*last[:3], True)


def settle(store: EventStore, outcome: Outcome) -> Outcome:
    """The outcome as the log tells it now: a queued command the runner has handled becomes applied (with
    the engine's warning, if any) or rejected; anything else is returned as it is."""
    if outcome.result != "queued":
        return outcome
    return _answered(outcome, command_outcome(store, outcome.session_id, outcome.command_id, after=outcome.after))


def _answered(outcome: Outcome, done: CommandOutcome | None) -> Outcome:
    """A queued outcome with the runner's answer, once there is one."""
    if done is None:
        return outcome
    if done.applied:
        return replace(outcome, result="applied", message=f"{outcome.name} applied", warning=done.warning or "")
    return replace(outcome, result="rejected", message=done.reason or f"{outcome.name} rejected")


def _send(ctx: Console, session_id: str, payload: dict[str, Any]) -> Outcome:
    name = FORM_NAMES.get(payload["kind"], payload["kind"])
    seen = ctx.store.session(session_id).last_seq
    try:
        command_id = queue_command(ctx.store, session_id, payload)
    except InvalidCommand as error:  # the form says which command it sends: only what is wrong, as a sentence
        return Outcome("invalid", error.problem[:1].upper() + error.problem[1:])
    except SessionFinished as error:
        return Outcome("invalid", str(error))
    ctx.pool.ensure_running(session_id)
    queued = Outcome(
        "queued", f"{name} queued; it applies at the next step boundary", session_id, command_id, seen, name
    )
    return _answered(queued, wait_for_outcome(ctx.store, session_id, command_id, QUICK_ANSWER, after=seen))
