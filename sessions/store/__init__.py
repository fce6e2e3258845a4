"""The session store interface: an append-only event log per session, a command queue, a runner lease.

Backends implement `EventStore` and nothing else; the runner, CLI and console depend only on this
module. Errors a backend raises are translated into `StoreError` and its subclasses here, in one
place per backend; the whole tree, with the rest of the package's errors, is in `sessions.errors`.

The runner lease makes "exactly one runner per session" a property of the store: `claim` is a
compare-and-set that returns a generation number, and every write a runner makes carries that
generation (a fencing token), so a runner that lost its lease can no longer change the session.
Leases are judged by one clock: the database's on PostgreSQL, whose runners may be on many machines,
and the caller's on SQLite, whose runners share one (`EventStore.claim`, `EventStore.clock`).
Workers (`sessions.worker.processes`) take the same lease with `claim_runnable`, for whichever sessions need a
runner, and `wait_for_work` lets them sleep until the store says one may.

The store also keeps the operators' plan templates (`planner.templates`), every version of each
name: saving a name again adds its next version, and nothing but a delete removes one; and what each
operator did with the items of the attention inbox (seen, dismissed), which belongs to no session's log.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessions.errors import SessionsError

if TYPE_CHECKING:
    from planner.events import Event
    from planner.templates import Template

__all__ = [
    "DEFAULT_DATABASE",
    "STALE_AFTER",
    "EventStore",
    "LeaseLost",
    "QueuedCommand",
    "SeqConflict",
    "SessionFinished",
    "SessionInUse",
    "SessionInfo",
    "SessionNotFound",
    "StoreError",
    "StoreUnavailable",
    "database_target",
    "lease_live",
]


DEFAULT_DATABASE = "var/sessions.db"
STALE_AFTER = 15.0
"""Seconds without a heartbeat after which a runner is presumed dead and its lease can be taken."""
"""Where sessions are kept when neither `--db` nor `$ANDOR_DB` says otherwise."""


def database_target(target: str | os.PathLike[str] | None = None) -> str | os.PathLike[str]:
    """The database a command means: `target` if given (an empty one stays an error for the backend to
    refuse), else `$ANDOR_DB` if set and not empty, else `DEFAULT_DATABASE`."""
    if target is not None:
        return target
    return os.environ.get("ANDOR_DB") or DEFAULT_DATABASE


class StoreError(SessionsError):
    """Base of the store's errors (the tree is in `sessions.errors`)."""


class SessionNotFound(StoreError):
    """No session with that id."""


class SessionFinished(StoreError):
    """A command for a session that has ended: nothing could ever apply it."""


class SeqConflict(StoreError):
    """Another writer appended first: the expected sequence number is stale."""


class LeaseLost(StoreError):
    """A write or heartbeat carried a lease generation that is no longer the session's."""


class StoreUnavailable(StoreError):
    """The database could not be opened or written."""


class SessionInUse(StoreError):
    """A session that cannot be deleted now: a live runner holds it, or a fork's log still shows its files."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's row: identity plus a projection of its log kept for fast listing.

    `cause` (a `planner.events.Cause` value) says why the session has its `status`, `reason` says it
    in words; None where the writer did not say."""

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
    lease_owner: str | None = None
    lease_gen: int = 0
    last_order: int = 0
    """The order number of the newest command queued for the session (0: none yet)."""
    cause: str | None = None
    cost_usd: float | None = None
    """The model calls' estimated spend so far, in USD; None where the writer did not say."""
    status_since: float | None = None
    """When `status` last changed: how long a paused session has waited for a person."""
    lease_seconds: float | None = None
    """The lease holder's own lease length (its `stale_after`): its lease is stale once its heartbeat is
    older than this, whatever length the runner asking uses; None without a lease, or for one taken
    before the store kept it."""

    def runner_alive(self, now: float, fallback: float) -> bool:
        """Whether a runner holds the session at `now` (the store's `clock`): `lease_live`, as `claim` judges it."""
        return self.runner_pid is not None and lease_live(self.heartbeat_at, self.lease_seconds, now, fallback)


def lease_live(heartbeat_at: float | None, lease_seconds: float | None, now: float, fallback: float) -> bool:
    """Whether a lease whose holder last beat at `heartbeat_at` still holds at `now`: its heartbeat is no
    older than the holder's own lease length (`lease_seconds`; `fallback`, the asker's, for a lease
    taken before the store kept it). The one rule `claim` and the console judge a runner by."""
    length = lease_seconds if lease_seconds is not None else fallback
    return heartbeat_at is not None and heartbeat_at >= now - length


@dataclass(frozen=True, slots=True)
class QueuedCommand:
    command_id: str
    payload: dict[str, Any]
    queued_at: float
    problem: str | None = None
    """Why the stored payload cannot be read as a command at all (it is then rejected, not retried)."""
    order: int = 0
    """Its place in the session's queue: order numbers run 1, 2, 3, ... per session."""


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
        cause: str | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Create the session row and its first events together (`cost_usd` as in `append`)."""

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
        lease: int | None = None,
        beat: float | None = None,
        cause: str | None = None,
        cost_usd: float | None = None,
        task: str | None = None,
    ) -> int | None:
        """Append events whose seqs continue the log, update the listing projection (`status`,
        `cause`, `reason`, `steps`, and unless None `cost_usd` and `task`, the task as lists show it
        (masked once a secret it spells out is found): the state after them;
        `status_since` moves when the status changes) and mark commands
        handled, all in one transaction. Raises `SeqConflict` if any seq is taken, and `LeaseLost`
        when `lease` (a runner's fencing token) is no longer the session's lease generation. With
        `beat` (a time, like `heartbeat`'s `now`; on PostgreSQL only a flag, see `claim`), an append
        under a lease is also its heartbeat.

        Returns the session's `last_order` as of this transaction (None: not known), so a runner
        that has seen every command up to it need not look at the queue before its next step."""

    @abstractmethod
    def load(self, session_id: str, *, after: int = 0, upto: int | None = None) -> list[Event]:
        """Events with after < seq <= upto, in order, upgraded to the current schema."""

    @abstractmethod
    def session(self, session_id: str) -> SessionInfo: ...

    @abstractmethod
    def sessions(self) -> list[SessionInfo]:
        """All sessions, newest first."""

    @abstractmethod
    def recent_actions(self, since: float) -> dict[str, int]:
        """How many browser actions each session recorded at or after `since` (sessions with none are
        left out): the fleet view's step rate, in one query however many sessions there are."""

    @abstractmethod
    def enqueue(self, session_id: str, command_id: str, payload: dict[str, Any]) -> None:
        """Queue an operator command with the next order number; durable when this returns. Raises
        `SessionFinished` when the session has ended, checked atomically with the runner's last write."""

    @abstractmethod
    def pending(self, session_id: str) -> list[QueuedCommand]:
        """Queued commands not yet handled, oldest first."""

    @abstractmethod
    def claim(
        self,
        session_id: str,
        owner: str,
        now: float,
        stale_after: float,
        *,
        gone: Callable[[str], bool] = lambda owner: False,
        pid: int | None = None,
    ) -> int | None:
        """Take the runner lease if it is free (no holder, a heartbeat older than the holder's lease
        length, or a holder `gone` says is dead): a compare-and-set, so of many racers exactly one wins.
        `stale_after` is this claimer's lease length, kept with the lease it takes (`lease_seconds`),
        and used for a holder whose length is not known. Returns the new lease generation (the fencing
        token), or None when another runner holds it.

        The lease clock: on PostgreSQL, whose runners may be on many machines, heartbeats are written
        and judged by the database's clock and `now` is ignored, so a claimer whose clock runs ahead
        cannot take a lease whose holder is still acting; on SQLite, one machine, `now` (the caller's
        `time.time()`) is the time, as it is for `heartbeat`'s `now` and `append`'s `beat`. `clock`
        says what time the lease clock reads."""

    @abstractmethod
    def claim_runnable(
        self, owner: str, now: float, stale_after: float, *, limit: int, pid: int | None = None
    ) -> list[tuple[str, int]]:
        """Take the leases of up to `limit` sessions that need a runner and have none: not ended, no live
        holder (no lease, or a heartbeat older than its holder's lease length), and either running
        (new, handed back, or left by a runner that died) or with a command waiting (a resume or an
        approval for a paused one). Each lease is taken as `claim` takes it (the next generation, the
        fencing token, `stale_after` kept as its length), all in one transaction that skips sessions
        another worker is claiming at that moment, and by the same clock (`now` is ignored on
        PostgreSQL). Returns (session id, lease generation) pairs, least recently updated first."""

    @abstractmethod
    def wait_for_work(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a sign that a session may have become runnable (created
        running, sent a command, or released by its runner); True when one came. A backend that
        cannot push such signs just waits and returns False, and the caller looks anyway."""

    @abstractmethod
    def heartbeat(self, session_id: str, lease: int, now: float) -> None:
        """Keep the lease alive, beating at `now` (on PostgreSQL the database's time: see `claim`);
        raises `LeaseLost` when it has moved on."""

    @abstractmethod
    def clock(self) -> float:
        """The time by the clock leases are judged by (`claim`), in seconds since the epoch: the
        database's on PostgreSQL, this machine's on SQLite. A reader judging a lease
        (`SessionInfo.runner_alive`) takes its `now` from here, so it agrees with the claimers."""

    @abstractmethod
    def release(self, session_id: str, lease: int) -> None:
        """Give the lease up, if it is still this generation's."""

    @abstractmethod
    def save_template(self, template: Template) -> Template:
        """Store `template` as its name's next version (1 for a new name), whatever version it says;
        returns it with the version it got."""

    @abstractmethod
    def templates(self, name: str | None = None) -> list[Template]:
        """Every stored version (of `name` only, when given), by name, then version."""

    @abstractmethod
    def template(self, name: str, version: int | None = None) -> Template | None:
        """That version of the template, or its newest; None when there is no such template."""

    @abstractmethod
    def delete_templates(self, name: str, version: int | None = None) -> int:
        """Delete that version of the template, or every version; returns how many were deleted."""

    @abstractmethod
    def mark_attention(self, operator: str, key: str, mark: str, now: float) -> None:
        """Record what `operator` did with the inbox item `key` (`sessions.client.attention`): "seen" or
        "dismissed"; a later mark of the same item replaces the earlier."""

    @abstractmethod
    def attention_marks(self, operator: str, keys: Collection[str]) -> dict[str, str]:
        """The marks `operator` gave the items among `keys`, by key (items they never marked are absent)."""

    @abstractmethod
    def delete_session(self, session_id: str, *, now: float | None = None, stale_after: float = STALE_AFTER) -> None:
        """Delete the session: its events, its queued commands, the operators' marks on its inbox items
        (their keys start with its id and a colon) and its row, in one transaction. Raises
        `SessionNotFound` for no such session, and `SessionInUse` while a runner holds its lease, judged
        as `claim` judges it (by the lease clock: `now`, default the time now, on SQLite; `stale_after`
        for a holder whose lease length is not known), or while a session forked from it
        exists (a fork's log records the paths of this session's screenshots). Its files are the
        artifact store's to remove (`sessions.client.deletion`)."""

    @abstractmethod
    def close(self) -> None: ...
