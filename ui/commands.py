"""Sending operator commands from the console and reporting what the runner made of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions.errors import InvalidCommand
from sessions.runner import queue_command, wait_for_outcome
from sessions.store import SessionFinished
from ui.context import Console

__all__ = ["Outcome", "send"]


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
    """Queue a command, make sure a runner will apply it, and wait briefly for its outcome."""
    seen = ctx.store.session(session_id).last_seq
    try:
        command_id = queue_command(ctx.store, session_id, payload)
    except (InvalidCommand, SessionFinished) as error:
        return Outcome("invalid", str(error))
    ctx.pool.ensure_running(session_id)
    done = wait_for_outcome(ctx.store, session_id, command_id, wait, after=seen)
    if done is None:
        return Outcome("queued", f"{payload['kind']} queued; it applies at the next step boundary")
    if done.applied:
        return Outcome("applied", f"{payload['kind']} applied")
    return Outcome("rejected", done.reason or "rejected")
