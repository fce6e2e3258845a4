"""Durable sessions: the event store, the runner that steps a session, and the headless CLI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner._lazy import lazy_exports

if TYPE_CHECKING:
    from sessions.client.commands import queue_command
    from sessions.client.creation import create_session, fork_session
    from sessions.client.deletion import delete_session
    from sessions.store import (
        EventStore,
        LeaseLost,
        SeqConflict,
        SessionFinished,
        SessionInfo,
        SessionInUse,
        SessionNotFound,
        StoreError,
        StoreUnavailable,
    )
    from sessions.store.reading import load_state
    from sessions.store.sql import SqlStore, open_store
    from sessions.worker.runner import Runner

__all__ = [
    "EventStore",
    "LeaseLost",
    "Runner",
    "SeqConflict",
    "SessionFinished",
    "SessionInUse",
    "SessionInfo",
    "SessionNotFound",
    "SqlStore",
    "StoreError",
    "StoreUnavailable",
    "create_session",
    "delete_session",
    "fork_session",
    "load_state",
    "open_store",
    "queue_command",
]

_HOME = {
    "EventStore": "sessions.store",
    "LeaseLost": "sessions.store",
    "Runner": "sessions.worker.runner",
    "SeqConflict": "sessions.store",
    "SessionFinished": "sessions.store",
    "SessionInUse": "sessions.store",
    "SessionInfo": "sessions.store",
    "SessionNotFound": "sessions.store",
    "SqlStore": "sessions.store.sql",
    "StoreError": "sessions.store",
    "StoreUnavailable": "sessions.store",
    "create_session": "sessions.client.creation",
    "delete_session": "sessions.client.deletion",
    "fork_session": "sessions.client.creation",
    "load_state": "sessions.store.reading",
    "open_store": "sessions.store.sql",
    "queue_command": "sessions.client.commands",
}
"""Where each name lives. Imported on first use: a command that needs only one module (the CLI's
`list` needs no engine) does not pay for all of them."""


__getattr__ = lazy_exports(__name__, _HOME, globals())
