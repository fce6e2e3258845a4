"""Sending commands to a session and reading what its runner made of them.

A command is queued in the store and applied by the session's runner at its next step boundary; the
queue is idempotent by command id, so a command sent twice (a replayed press) is one command.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from pydantic import BaseModel, ValidationError

from planner.commands import Command, command_problem, describe_command_error, parse_command
from planner.events import CommandApplied, CommandRejected, Event
from planner.secrets import secrets_in
from sessions.client.outcomes import CommandOutcome
from sessions.errors import InvalidCommand
from sessions.store import EventStore

__all__ = ["command_outcome", "queue_command", "wait_for_outcome"]


def queue_command(store: EventStore, session_id: str, command: Mapping[str, object] | Command) -> str:
    """Validate a command's shape and queue it; the runner decides at the next step boundary.
    Raises `SessionFinished` for a session that has ended: no runner would ever apply it."""
    try:
        parsed = command if isinstance(command, BaseModel) else parse_command(dict(command))
    except ValidationError as error:
        raise InvalidCommand(describe_command_error(error), command_problem(error)) from None
    store.enqueue(session_id, parsed.command_id, parsed.model_dump(mode="json"))
    return parsed.command_id


def command_outcome(store: EventStore, session_id: str, command_id: str, *, after: int = 0) -> CommandOutcome | None:
    """What a runner made of the command, if it has handled it yet (one read of the log past `after`).

    Give `after` the session's last event number from before the command was queued: an outcome
    can only come later, so the read never goes through the log's older events."""
    return _shown_outcome(store, session_id, _outcome_in(store.load(session_id, after=after), command_id))


def wait_for_outcome(
    store: EventStore, session_id: str, command_id: str, timeout: float, *, after: int = 0
) -> CommandOutcome | None:
    """Poll until a runner applied or rejected the command (`command_outcome`); None if none did
    within `timeout` seconds (the command stays queued and applies when the session runs). Each
    look reads only the events the last one has not seen."""
    deadline = time.monotonic() + timeout
    while True:
        events = store.load(session_id, after=after)
        done = _outcome_in(events, command_id)
        if done is not None or time.monotonic() >= deadline:
            return _shown_outcome(store, session_id, done)
        after = events[-1].seq if events else after
        time.sleep(0.05)


def _outcome_in(events: list[Event], command_id: str) -> CommandOutcome | None:
    for event in events:
        handled = event.payload
        if isinstance(handled, CommandApplied | CommandRejected) and handled.command_id == command_id:
            if isinstance(handled, CommandApplied):
                return CommandOutcome(True, None, event.seq, handled.warning)
            return CommandOutcome(False, handled.reason, event.seq)
    return None


def _shown_outcome(store: EventStore, session_id: str, outcome: CommandOutcome | None) -> CommandOutcome | None:
    """An outcome as people see it: a reason or warning that quotes the session's text is masked
    (`planner.secrets`; the whole log is read for its secrets only when there is such text)."""
    if outcome is None or (outcome.reason is None and outcome.warning is None):
        return outcome
    secrets = secrets_in(store.load(session_id))
    if not secrets:
        return outcome
    reason = secrets.mask(outcome.reason) if outcome.reason is not None else None
    warning = secrets.mask(outcome.warning) if outcome.warning is not None else None
    return CommandOutcome(outcome.applied, reason, outcome.seq, warning)
