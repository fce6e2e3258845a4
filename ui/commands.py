"""Sending operator commands from the console and reporting what the runner made of them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from planner.events import CommandApplied, CommandRejected
from sessions.runner import InvalidCommand, queue_command
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
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for event in ctx.store.load(session_id, after=seen):
            seen = event.seq
            handled = event.payload
            if isinstance(handled, CommandApplied | CommandRejected) and handled.command_id == command_id:
                if isinstance(handled, CommandRejected):
                    return Outcome("rejected", handled.reason)
                return Outcome("applied", f"{payload['kind']} applied")
        time.sleep(0.05)
    return Outcome("queued", f"{payload['kind']} queued; it applies at the next step boundary")
