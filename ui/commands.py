"""Sending operator commands from the console and showing what became of them.

A press sends its command and returns: the callback signs it with the operator at the page, hands it
to the session client (which queues it and makes sure a runner will apply it) and keeps the queued
outcome. Each later redraw settles that outcome against its own snapshot (`SessionView.handled`), so
"applied" or the engine's reason shows as soon as a redraw finds it, and a press never holds the page.

Streamlit can run one press's callback twice: a rerun request that arrives while the callback runs
makes the next run apply the same widget states again. So every control draws its command's id into
its callback's arguments (`new_command_id`): a replay sends the same id, and the queue keeps one
command per id. A real second press comes from a later drawing, with a new id. A button whose press the page's run
handles itself (Start session, Fork) keeps the same rule with `drawn_press`: what a drawing's press
made is remembered, and a second application of that press opens it instead of making another.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import streamlit as st

from planner.commands import Command
from sessions.client import CommandRefused, Outcome, OutcomeKind
from ui.access import AccessRefused, current
from ui.context import Console

__all__ = [
    "APPLIED_SECONDS",
    "FORM_NAMES",
    "alert",
    "drawn_press",
    "faded",
    "first_drawn",
    "made_by_press",
    "new_command_id",
    "remember_made",
    "send",
]

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


def new_command_id() -> str:
    """The id of the command a control will send, drawn with the control (see the module's docstring)."""
    return uuid.uuid4().hex


_PRESSED = "_pressed"
"""Session-state key: button name -> the drawing its last press came from."""
_MADE = "_made"
"""Session-state key: (button name, drawing) -> what that drawing's press made (a session id)."""


def drawn_press(name: str) -> dict[str, Any]:
    """The callback arguments of a button named `name` whose press the run handles: they tie the press
    to this drawing (`made_by_press`)."""
    return {"on_click": _pressed, "args": (name, new_command_id())}


def _pressed(name: str, drawing: str) -> None:
    st.session_state.setdefault(_PRESSED, {})[name] = drawing


def made_by_press(name: str) -> str | None:
    """What the press of `name` being handled already made, if this is a second application of it."""
    drawing = st.session_state.get(_PRESSED, {}).get(name)
    made: str | None = st.session_state.get(_MADE, {}).get((name, drawing))
    return made


def remember_made(name: str, made: str) -> str:
    """Keep what the press of `name` being handled made, so a second application finds it; returns it."""
    drawing = st.session_state.get(_PRESSED, {}).get(name)
    st.session_state.setdefault(_MADE, {})[name, drawing] = made
    return made


def send(ctx: Console, session_id: str, command: Command, command_id: str) -> Outcome:
    """Send `command` as `command_id`, signed with the operator at the page; the answer names the command
    as the console's form does ("cost cap queued", not "budget").

    Every console command passes here, so this is where one the operator may not send is refused,
    unqueued (`ui.access`): a disabled button is a courtesy, this is the rule."""
    try:
        signed = current().sign(command.model_copy(update={"command_id": command_id}))
    except AccessRefused as refused:
        return Outcome.refused(str(refused))
    if isinstance(signed, str):
        return Outcome.refused(signed)
    try:
        return ctx.client.send(session_id, signed, name=FORM_NAMES.get(command.kind, command.kind.replace("_", " ")))
    except CommandRefused as refused:
        return Outcome.refused(str(refused))


def faded(outcome: Outcome, shown: float | None) -> bool:
    """Whether `outcome`, first drawn at `shown` (`time.monotonic()`; None: not drawn yet), has been on
    the page long enough to go (`APPLIED_SECONDS`). The clock starts at the first draw, not at the
    answer: a slow redraw (a loaded machine, a big tree) must not take the answer away before the
    operator could see it."""
    return (
        outcome.kind is OutcomeKind.APPLIED
        and not outcome.warning
        and shown is not None
        and time.monotonic() - shown > APPLIED_SECONDS
    )


def first_drawn(outcome: Outcome, shown: float | None) -> float | None:
    """When `outcome` was first drawn: `shown` if it was, now if it is being drawn as an answer for the
    first time, None while it is still queued."""
    if shown is not None or outcome.kind is OutcomeKind.QUEUED:
        return shown
    return time.monotonic()


def alert(outcome: Outcome) -> Callable[..., object]:
    """How an answer is drawn: queued as news, applied as success, applied with a warning as a warning
    (the operator has to know what the command did not undo), refused as an error."""
    if outcome.kind is OutcomeKind.QUEUED:
        return st.info
    if not outcome.ok:
        return st.error
    return st.warning if outcome.warning else st.success
