"""Reading a session's log for people and files: its events up to a point and the state they fold to, masked.

Kept apart from the runner so that a read-only command (`show`, `export`, the console's time travel)
loads neither the engine nor the model and browser adapters.

Every reader that shows or writes what a session did reads here, and reads it masked
(`planner.secrets`): each secret the whole log declares or finds is `MASK` in every event, those before
the one that found it included. The runner and the engine read the raw log (`EventStore.load`): the
browser must type the values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.inputs import shown
from planner.secrets import Secrets, secrets_in
from planner.state import TERMINAL, SessionState, replay
from sessions.errors import SessionInputError
from sessions.store import EventStore, SessionInfo

if TYPE_CHECKING:
    from planner.events import Event

__all__ = ["ended", "event_number", "load_events", "load_state", "masked"]


def event_number(store: EventStore, session_id: str, at: object) -> int:
    """`at` as an event of the session, or one sentence naming the events there are."""
    last = store.session(session_id).last_seq
    if isinstance(at, bool) or not isinstance(at, int) or not 1 <= at <= last:
        raise SessionInputError(f"session {session_id} has events 1 to {last}; choose one of them, not {shown(at)}")
    return at


def masked(events: list[Event], secrets: Secrets) -> list[Event]:
    """`events` as a reader may see them: each with `secrets` masked (the same list when there are none)."""
    if not secrets:
        return events
    return [secrets.mask_event(event) for event in events]


def load_events(
    store: EventStore, session_id: str, upto: int | None = None, *, after: int = 0, secrets: Secrets | None = None
) -> list[Event]:
    """The log, or its events past `after` up to `upto` (refused with one sentence when there is no such
    event), masked with the secrets of the whole log; a caller that already knows them (the console's
    follower of the log) passes `secrets`, and only the events asked for are read."""
    if upto is not None:
        upto = event_number(store, session_id, upto)
    events = store.load(session_id, after=after, upto=upto)
    if secrets is None:
        secrets = secrets_in(events)
        if after:
            secrets = secrets_in(store.load(session_id, upto=after), secrets)
        if upto is not None:
            secrets = secrets_in(store.load(session_id, after=upto), secrets)
    return masked(events, secrets)


def load_state(store: EventStore, session_id: str, upto: int | None = None) -> SessionState:
    """State at the end of the log, or just after event `upto` (time travel), masked."""
    return replay(load_events(store, session_id, upto))


def ended(store: EventStore, session_id: str, then: str) -> SessionInfo:
    """The session's row, once it has ended and its runner has let go of it: only then may an event
    come from outside the runner (a diagnosis, a verdict) without racing its last writes. Otherwise one
    sentence ending in `then` ("diagnose it once it has").
    """
    info = store.session(session_id)
    if info.status not in {status.value for status in TERMINAL}:
        raise SessionInputError(f"session {session_id} has not finished ({info.status}); {then}")
    if info.lease_owner is not None:
        raise SessionInputError(f"session {session_id} is still being closed by its runner; try again in a moment")
    return info
