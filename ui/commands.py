"""Sending operator commands from the console and reporting what the runner made of them.

One press sends one command. Streamlit can run a button's callback twice for one press: `send` waits
for the runner's answer inside the callback, the live panel's timer asks for a redraw meanwhile, and
Streamlit then restarts the run with the press still pending, so the callback runs again before
anything is drawn (a Step pressed once ran two steps). A real second press comes from a page drawn
after the first, so an identical command from the same tab before the page has been drawn since
(`drawn`) is that replay: it gets the first one's answer and is not queued again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from sessions.errors import InvalidCommand
from sessions.runner import queue_command, wait_for_outcome
from sessions.store import SessionFinished
from ui.context import Console

__all__ = ["FORM_NAMES", "Outcome", "drawn", "send"]

_LAST = "_last_command"
"""Session state: (session id, payload, outcome, drawn since) of the tab's last command."""

FORM_NAMES = {
    "budget": "cost cap",
    "edit": "description edit",
    "edit_action": "edited action",
    "approve": "approval",
    "reject": "rejection",
}
"""What the console calls a command where its kind is not already the form's or the button's name."""


@dataclass(frozen=True)
class Outcome:
    """`applied`, `rejected` (with the engine's reason), `queued` (not handled yet) or `invalid` (not queued:
    malformed, or the session has ended)."""

    result: str
    message: str

    @property
    def ok(self) -> bool:
        return self.result in ("applied", "queued")


def send(ctx: Console, session_id: str, payload: dict[str, Any], wait: float = 2.0) -> Outcome:
    """Queue a command, make sure a runner will apply it, and wait briefly for its outcome.

    The answer names the command as the console's form does ("cost cap applied", not "budget")."""
    last = st.session_state.get(_LAST)
    if last and last[:2] == (session_id, payload) and not last[3]:
        return last[2]
    outcome = _send(ctx, session_id, payload, wait)
    st.session_state[_LAST] = (session_id, payload, outcome, False)
    return outcome


def drawn() -> None:
    """The page (or the live panel) has been drawn since the last command: the next one is a new press."""
    last = st.session_state.get(_LAST)
    if last and not last[3]:
        st.session_state[_LAST] = (*last[:3], True)


def _send(ctx: Console, session_id: str, payload: dict[str, Any], wait: float) -> Outcome:
    name = FORM_NAMES.get(payload["kind"], payload["kind"])
    seen = ctx.store.session(session_id).last_seq
    try:
        command_id = queue_command(ctx.store, session_id, payload)
    except (InvalidCommand, SessionFinished) as error:
        return Outcome("invalid", str(error))
    ctx.pool.ensure_running(session_id)
    done = wait_for_outcome(ctx.store, session_id, command_id, wait, after=seen)
    if done is None:
        return Outcome("queued", f"{name} queued; it applies at the next step boundary")
    if done.applied:
        return Outcome("applied", f"{name} applied")
    return Outcome("rejected", done.reason or "rejected")
