"""One contract for the session store, run against every backend we ship.

SQLite in memory and on disk always; PostgreSQL too when ANDOR_TEST_POSTGRES holds a SQLAlchemy URL.
"""

from __future__ import annotations

import os
import time

import pytest

from planner.events import Event, Kind
from sessions.sql import SqlStore, database_url
from sessions.store import EventStore, SeqConflict, SessionNotFound

BACKENDS = ["memory", "disk"] + (["postgres"] if os.environ.get("ANDOR_TEST_POSTGRES") else [])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path) -> EventStore:  # type: ignore[no-untyped-def]
    url = {
        "memory": "sqlite://",
        "disk": database_url(tmp_path / "store.db"),
        "postgres": os.environ.get("ANDOR_TEST_POSTGRES", ""),
    }[request.param]
    backend = SqlStore(url)
    yield backend
    backend.close()


def _events(start: int, count: int) -> list[Event]:
    return [Event(seq, Kind.STEP, "0", {"frame": "ENTERING", "work": "expand", "n": seq}, 1, time.time()) for seq in range(start, start + count)]


def _created(store: EventStore, session_id: str = "s1") -> None:
    store.create_session(session_id, "task", "script", _events(1, 1), status="running")


def test_append_and_load_round_trip(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 3), status="running", reason=None, steps=3)
    events = store.load("s1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[2].data == {"frame": "ENTERING", "work": "expand", "n": 3}
    assert events[2].kind is Kind.STEP
    assert [e.seq for e in store.load("s1", after=2, upto=3)] == [3]
    info = store.session("s1")
    assert (info.status, info.steps, info.last_seq) == ("running", 3, 4)


def test_duplicate_seq_is_a_conflict_not_an_overwrite(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 2), status="running", reason=None, steps=2)
    with pytest.raises(SeqConflict):
        store.append("s1", _events(3, 1), status="running", reason=None, steps=9)
    assert [e.data["n"] for e in store.load("s1")[1:]] == [2, 3]
    assert store.session("s1").steps == 2


def test_gap_is_a_conflict(store: EventStore) -> None:
    _created(store)
    with pytest.raises(SeqConflict):
        store.append("s1", _events(5, 1), status="running", reason=None, steps=1)


def test_unknown_session(store: EventStore) -> None:
    with pytest.raises(SessionNotFound):
        store.session("nope")
    with pytest.raises(SessionNotFound):
        store.load("nope")
    with pytest.raises(SessionNotFound):
        store.enqueue("nope", "c1", {"kind": "pause"})


def test_commands_queue_until_handled_with_their_events(store: EventStore) -> None:
    _created(store)
    store.enqueue("s1", "c1", {"kind": "pause"})
    store.enqueue("s1", "c2", {"kind": "resume"})
    assert [c.command_id for c in store.pending("s1")] == ["c1", "c2"]
    store.append("s1", _events(2, 1), status="paused", reason=None, steps=0, handled=["c1"])
    assert [c.command_id for c in store.pending("s1")] == ["c2"]
    with pytest.raises(SeqConflict):
        store.append("s1", _events(2, 1), status="paused", reason=None, steps=0, handled=["c2"])
    assert [c.command_id for c in store.pending("s1")] == ["c2"], "a failed append must not mark commands handled"


def test_runner_lease(store: EventStore) -> None:
    _created(store)
    assert store.claim("s1", 100, now=1000.0, stale_after=15)
    assert not store.claim("s1", 200, now=1005.0, stale_after=15)
    assert store.claim("s1", 200, now=1020.0, stale_after=15)
    store.release("s1", 200)
    assert store.claim("s1", 300, now=1021.0, stale_after=15)


def test_sessions_listed_newest_first(store: EventStore) -> None:
    _created(store, "a")
    time.sleep(0.01)
    _created(store, "b")
    assert [info.id for info in store.sessions()] == ["b", "a"]


def test_migrations_are_recorded_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = database_url(tmp_path / "m.db")
    SqlStore(url).close()
    store = SqlStore(url)
    import sqlalchemy as sa

    with store._engine.connect() as conn:  # noqa: SLF001 - checking the migration table itself
        versions = conn.execute(sa.text("select version from schema_migrations")).scalars().all()
    assert versions == [1]
    store.close()
