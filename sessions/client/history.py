"""States of a session at past events, for the read-only timeline and the fork comparison."""

from __future__ import annotations

import threading
from collections import OrderedDict

from planner.secrets import Secrets
from planner.state import SessionState, replay
from sessions.store import EventStore
from sessions.store.reading import load_events

__all__ = ["TimeTravel"]


class TimeTravel:
    """States at past events, for the read-only timeline: rebuilt from the log, masked (`sessions.store.reading`),
    and kept in a small LRU shared by the client's readers (a lock keeps it whole between threads)."""

    def __init__(self, store: EventStore, size: int = 8) -> None:
        self.store = store
        self.size = size
        self._cache: OrderedDict[tuple[str, int, Secrets | None], SessionState] = OrderedDict()
        self._lock = threading.Lock()

    def at(self, session_id: str, seq: int, secrets: Secrets | None = None) -> SessionState:
        """The state just after event `seq`, masked with `secrets`, those of the whole log as the caller
        knows them (the console's follower of the log does); None: read them with it. A secret found
        later masks the past too, so the secrets are part of what a cached state is kept under."""
        key = (session_id, seq, secrets)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        state = replay(load_events(self.store, session_id, upto=seq, secrets=secrets))
        with self._lock:
            self._cache[key] = state
            if len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return state
