"""The errors a client of sessions catches, by type (the tree is `sessions.errors`): one sentence each."""

from __future__ import annotations

from sessions.client.deletion import FilesLeft
from sessions.client.identity import UnusableOperator
from sessions.client.outcomes import CommandRefused
from sessions.errors import InvalidCommand, SessionInputError, SessionsError, UnknownModel
from sessions.store import SessionFinished, SessionInUse, SessionNotFound, StoreError, StoreUnavailable

__all__ = [
    "CommandRefused",
    "FilesLeft",
    "InvalidCommand",
    "SessionFinished",
    "SessionInUse",
    "SessionInputError",
    "SessionNotFound",
    "SessionsError",
    "StoreError",
    "StoreUnavailable",
    "UnknownModel",
    "UnusableOperator",
]
