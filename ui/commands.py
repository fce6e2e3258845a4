"""Sending operator commands from the console and reporting what the runner made of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions.errors import InvalidCommand
from sessions.runner import queue_command, wait_for_outcome
from sessions.store import SessionFinished
from ui.context import Console

__all__ = ["FORM_NAMES", "Outcome", "send"]

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
