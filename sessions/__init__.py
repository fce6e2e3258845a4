"""Durable sessions: the event store, the runner that steps a session, and the headless CLI."""

from sessions.runner import Runner, create_session, fork_session, load_state, queue_command
from sessions.sql import SqlStore, open_store
from sessions.store import (
    EventStore,
    LeaseLost,
    SeqConflict,
    SessionFinished,
    SessionInfo,
    SessionNotFound,
    StoreError,
    StoreUnavailable,
)

__all__ = [
    "EventStore",
    "LeaseLost",
    "Runner",
    "SeqConflict",
    "SessionFinished",
    "SessionInfo",
    "SessionNotFound",
    "SqlStore",
    "StoreError",
    "StoreUnavailable",
    "create_session",
    "fork_session",
    "load_state",
    "open_store",
    "queue_command",
]
