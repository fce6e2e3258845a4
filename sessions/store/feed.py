"""Which sessions changed, pushed by the database, so a long-lived reader re-reads only those.

Reading every session's log, listing and queue on every redraw would be most of the database's work,
and almost all of it finds nothing new. On PostgreSQL every write that changes a session sends
`NOTIFY andor_changed` (`sessions.store.sql`), and a `ChangeFeed` keeps one LISTEN connection per
process, stamping each session it hears of. A reader remembers the stamp it read under (`stamp`,
taken *before* the read) and reads again only once the stamp has moved: a change committed during
the read moves it again, so nothing is missed. The feed says "everything changed" when it
(re)connects and every `resync` seconds, so changes no write announces still arrive; on SQLite,
`Polling` says every session changed on every look. `Reads` is the memo built on a feed
(docs/architecture.md, "sessions/store/feed.py").
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from sessions.store import EventStore, QueuedCommand, SessionInfo

if TYPE_CHECKING:
    from planner.events import Event

__all__ = ["RESYNC_SECONDS", "ChangeFeed", "Changes", "Polling", "Reads", "open_feed"]

_log = logging.getLogger(__name__)

RESYNC_SECONDS = 10.0
"""How often a feed says every session changed, for changes no write announces (a stale lease)."""


class Changes(Protocol):
    """Stamps that move whenever a session (or, without an id, any session) may have changed."""

    def stamp(self, session_id: str | None = None) -> int:
        """A number that differs from every earlier one this session (or any session, for None)
        was given once it may have changed since."""
        ...

    def close(self) -> None: ...


class Polling:
    """For a database that sends no notifications: every look is a change."""

    def __init__(self) -> None:
        self._count = itertools.count(1)

    def stamp(self, session_id: str | None = None) -> int:
        return next(self._count)

    def close(self) -> None:
        """Nothing to stop."""


class ChangeFeed:
    """One LISTEN connection (a psycopg connection from `connect`, already listening) read by a daemon thread."""

    def __init__(
        self, connect: Callable[[], Any], *, resync: float = RESYNC_SECONDS, name: str = "change-feed"
    ) -> None:
        self._connect = connect
        self.resync = resync
        self.heard = 0
        """Notifications received so far (for tests and benchmarks)."""
        self._lock = threading.Lock()
        self._seq = 0
        self._floor = 0
        """Stamp of the last "everything changed": no session's stamp is below it."""
        self._last: dict[str, int] = {}
        self._stopping = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._follow, name=name, daemon=True)
        self._thread.start()

    def wait_listening(self, timeout: float) -> bool:
        """Whether the feed is LISTENing (within `timeout` seconds): writes from then on are heard."""
        return self._listening.wait(timeout)

    def stamp(self, session_id: str | None = None) -> int:
        with self._lock:
            if session_id is None:
                return self._seq
            return max(self._last.get(session_id, 0), self._floor)

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(5.0)

    def _changed(self, session_id: str | None) -> None:
        """One session changed, or (None) any may have."""
        with self._lock:
            self._seq += 1
            if session_id is None:
                self._floor = self._seq
                self._last.clear()
            else:
                self._last[session_id] = self._seq

    def _follow(self) -> None:
        import psycopg  # only a feed on PostgreSQL needs it: a quick look at SQLite loads no driver

        while not self._stopping.is_set():
            connection = None
            try:
                connection = self._connect()
                self._listening.set()
                self._changed(None)  # what changed before we listened was not heard
                synced = time.monotonic()
                while not self._stopping.is_set():
                    for note in connection.notifies(timeout=min(0.5, self.resync)):
                        self.heard += 1
                        self._changed(note.payload)
                    if time.monotonic() - synced >= self.resync:
                        self._changed(None)
                        synced = time.monotonic()
            except (psycopg.Error, OSError) as error:  # the feed outlives a database restart: it reconnects
                self._listening.clear()
                _log.warning("change feed lost its connection (%s); reconnecting in 1 s", error)
                self._changed(None)  # readers fall back to reading, as if polling, until it is back
                self._stopping.wait(1.0)
            finally:
                if connection is not None:
                    with contextlib.suppress(psycopg.Error):  # a broken connection may fail to close: dropped
                        connection.close()


def open_feed(store: EventStore, *, resync: float = RESYNC_SECONDS) -> ChangeFeed | Polling:
    """A `ChangeFeed` on a store that can listen (`SqlStore.listener` on PostgreSQL), else `Polling`."""
    listener = getattr(store, "listener", None)
    if listener is None:
        return Polling()
    probe = listener()
    if probe is None:
        return Polling()
    probe.close()
    return ChangeFeed(listener, resync=resync)


class Reads:
    """The reads a console repeats on every redraw, each reused until the feed says its session changed.

    Shared by every tab of the process (the feed is), so a hundred tabs on one session read it once
    per change. `reads` counts the store reads made, for tests and benchmarks."""

    def __init__(self, store: EventStore, changes: Changes) -> None:
        self.store = store
        self.changes = changes
        self.reads = 0
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, str | None], tuple[tuple[int, int], Any]] = {}

    def sessions(self) -> list[SessionInfo]:
        """The listing, newest first (`EventStore.sessions`)."""
        return self._read("sessions", None, self.store.sessions)

    def session(self, session_id: str) -> SessionInfo:
        return self._read("session", session_id, lambda: self.store.session(session_id))

    def pending(self, session_id: str) -> list[QueuedCommand]:
        return self._read("pending", session_id, lambda: self.store.pending(session_id))

    def recent_actions(self, window: float, *, max_age: float = 5.0) -> dict[str, int]:
        """Actions per session in the last `window` seconds (`EventStore.recent_actions`), reused for
        `max_age` seconds whatever changes meanwhile: a rate over minutes moves little in seconds, and
        in a busy fleet some session changes on every redraw (on SQLite every look is a change)."""
        tick = int(time.monotonic() // max_age)
        return self._read(
            "recent_actions", None, lambda: self.store.recent_actions(time.time() - window), tick, by_changes=False
        )

    def load(self, session_id: str, *, after: int) -> list[Event]:
        """The session's events past `after`, read now: a follower of the log (`ui.views.live.Live`)
        asks only when `changes.stamp(session_id)` has moved since its last read."""
        with self._lock:
            self.reads += 1
        return self.store.load(session_id, after=after)

    def _read(
        self, what: str, session_id: str | None, read: Callable[[], Any], tick: int = 0, *, by_changes: bool = True
    ) -> Any:
        """`read()`, or its last value while the session's stamp (unless not `by_changes`) and `tick` stand."""
        stamp = (self.changes.stamp(session_id) if by_changes else 0, tick)  # before the read: see the docstring
        with self._lock:
            memo = self._memo.get((what, session_id))
        if memo is not None and memo[0] == stamp:
            return memo[1]
        value = read()
        with self._lock:
            self.reads += 1
            self._memo[what, session_id] = (stamp, value)
        return value
