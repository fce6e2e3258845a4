"""Reading a session's log: its events up to a point and the state they fold to.

Kept apart from the runner so that a read-only command (`show`, `export`, the console's time travel)
loads neither the engine nor the model and browser adapters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.inputs import shown
from planner.state import SessionState, replay
from sessions.errors import SessionInputError
from sessions.store import EventStore

if TYPE_CHECKING:
    from planner.events import Event

__all__ = ["event_number", "load_events", "load_state"]


def event_number(store: EventStore, session_id: str, at: object) -> int:
    """`at` as an event of the session, or one sentence naming the events there are."""
    last = store.session(session_id).last_seq
    if isinstance(at, bool) or not isinstance(at, int) or not 1 <= at <= last:
        raise SessionInputError(f"session {session_id} has events 1 to {last}; choose one of them, not {shown(at)}")
    return at


def load_events(store: EventStore, session_id: str, upto: int | None = None) -> list[Event]:
    """The log, or its first `upto` events (refused with one sentence when there is no such event)."""
    if upto is not None:
        upto = event_number(store, session_id, upto)
    return store.load(session_id, upto=upto)


def load_state(store: EventStore, session_id: str, upto: int | None = None) -> SessionState:
    """State at the end of the log, or just after event `upto` (time travel)."""
    return replay(load_events(store, session_id, upto))
