"""What became of a command a client sent: queued, applied, rejected by the engine, or refused unqueued.

An `Outcome` is built by the client when it sends a command and settled against a later snapshot of
the session (`SessionView.handled`), so showing the answer needs no store read of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from sessions.errors import SessionsError

__all__ = ["CommandOutcome", "CommandRefused", "Outcome", "OutcomeKind"]


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What the runner made of a queued command: applied (with the engine's `warning`, if it gave one:
    what the command could not change, such as a pruned action that already ran in the browser), or
    rejected with the engine's reason."""

    applied: bool
    reason: str | None
    seq: int
    warning: str | None = None


class CommandRefused(SessionsError):
    """A command not queued: malformed, not the sender's to send, or for a session that has ended. The
    message is one sentence for the operator."""


class OutcomeKind(StrEnum):
    QUEUED = "queued"
    """Sent; its runner has not handled it yet (it applies at the next step boundary)."""
    APPLIED = "applied"
    REJECTED = "rejected"
    """The engine refused it at the boundary; `message` is its reason."""
    INVALID = "invalid"
    """Refused before it was queued (`CommandRefused`)."""


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    message: str
    session_id: str = ""
    command_id: str = ""
    name: str = ""
    """What the sender calls the command ("cost cap", "step"): the answers read "cost cap applied"."""
    warning: str = ""
    """What an applied command could not change, in the engine's words ("already ran in the browser: …")."""
    seq: int = 0
    """The event that answered it, once its runner has (0 before)."""

    @classmethod
    def refused(cls, message: str) -> Outcome:
        return cls(OutcomeKind.INVALID, message)

    @property
    def ok(self) -> bool:
        return self.kind in (OutcomeKind.APPLIED, OutcomeKind.QUEUED)

    @property
    def text(self) -> str:
        """The answer as the operator reads it: the message, then the engine's warning if it gave one."""
        return f"{self.message} — {self.warning}" if self.warning else self.message

    def settled(self, handled: Mapping[str, CommandOutcome]) -> Outcome:
        """This outcome as a snapshot's handled commands tell it: a queued command its runner has handled
        becomes applied (with the engine's warning) or rejected (with its reason)."""
        done = handled.get(self.command_id) if self.kind is OutcomeKind.QUEUED else None
        if done is None:
            return self
        if done.applied:
            applied = f"{self.name} applied"
            return replace(self, kind=OutcomeKind.APPLIED, message=applied, warning=done.warning or "", seq=done.seq)
        return replace(self, kind=OutcomeKind.REJECTED, message=done.reason or f"{self.name} rejected", seq=done.seq)
