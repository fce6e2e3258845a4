"""The session store interface: an append-only event log per session, plus a command queue.

Backends implement `EventStore` and nothing else; the runner, CLI and console depend only on this
module. Errors a backend raises are translated into this hierarchy in one place per backend:

    StoreError
    ├── SessionNotFound   no session with that id
    ├── SeqConflict       another writer appended first (the expected sequence number is stale)
    └── StoreUnavailable  the database could not be opened or written
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.events import Event

__all__ = [
    "StoreError",
    "SessionNotFound",
    "SeqConflict",
    "StoreUnavailable",
    "SessionInfo",
    "QueuedCommand",
    "EventStore",
]


class StoreError(Exception):
    """Base of the store's errors."""


class SessionNotFound(StoreError):
    pass


class SeqConflict(StoreError):
    pass


class StoreUnavailable(StoreError):
    pass


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's row: identity plus a projection of its log kept for fast listing."""

    id: str
    task: str
    model: str
    status: str
    reason: str | None
    steps: int
    last_seq: int
    created_at: float
    updated_at: float
    parent_id: str | None = None
    forked_at: int | None = None
    runner_pid: int | None = None
    heartbeat_at: float | None = None


@dataclass(frozen=True, slots=True)
class QueuedCommand:
    command_id: str
    payload: dict[str, Any]
    queued_at: float


class EventStore(ABC):
    """Append-only storage of session events. Every method is atomic."""

    @abstractmethod
    def create_session(
        self,
        session_id: str,
        task: str,
        model: str,
        events: Sequence[Event],
        *,
        status: str,
        steps: int = 0,
        reason: str | None = None,
        parent_id: str | None = None,
        forked_at: int | None = None,
    ) -> None:
        """Create the session row and its first events together."""

    @abstractmethod
    def append(
        self,
        session_id: str,
        events: Sequence[Event],
        *,
        status: str,
        reason: str | None,
        steps: int,
        handled: Sequence[str] = (),
    ) -> None:
        """Append events whose seqs continue the log, update the listing projection and mark commands
        handled, all in one transaction. Raises `SeqConflict` if any seq is taken."""

    @abstractmethod
    def load(self, session_id: str, *, after: int = 0, upto: int | None = None) -> list[Event]:
        """Events with after < seq <= upto, in order, upgraded to the current schema."""

    @abstractmethod
    def session(self, session_id: str) -> SessionInfo: ...

    @abstractmethod
    def sessions(self) -> list[SessionInfo]:
        """All sessions, newest first."""

    @abstractmethod
    def enqueue(self, session_id: str, command_id: str, payload: dict[str, Any]) -> None:
        """Queue an operator command; durable when this returns."""

    @abstractmethod
    def pending(self, session_id: str) -> list[QueuedCommand]:
        """Queued commands not yet handled, oldest first."""

    @abstractmethod
    def claim(self, session_id: str, pid: int, now: float, stale_after: float) -> bool:
        """Take the runner lease unless another live runner holds it; True when taken."""

    @abstractmethod
    def heartbeat(self, session_id: str, pid: int, now: float) -> None: ...

    @abstractmethod
    def release(self, session_id: str, pid: int) -> None: ...

    @abstractmethod
    def close(self) -> None: ...
