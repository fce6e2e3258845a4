"""One contract for the session store, run against every backend we ship.

SQLite in memory and on disk, and PostgreSQL: a throwaway server started for the test run (or the
one $ANDOR_TEST_POSTGRES names), a fresh database per test.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from planner.events import ActionExecuted, Event, Kind, NoteAdded
from sessions.store import EventStore, LeaseLost, SeqConflict, SessionFinished, SessionNotFound
from sessions.store.sql import _MIGRATIONS, SqlStore, database_url


def _events(start: int, count: int) -> list[Event]:
    return [
        Event(seq, Kind.NOTE_ADDED, "0", NoteAdded(text=f"note {seq}"), 1, time.time())
        for seq in range(start, start + count)
    ]


def _created(store: EventStore, session_id: str = "s1") -> None:
    store.create_session(session_id, "task", "script", _events(1, 1), status="running")


def test_append_and_load_round_trip(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 3), status="running", reason=None, steps=3)
    events = store.load("s1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[2].payload == NoteAdded(text="note 3")
    assert events[2].kind is Kind.NOTE_ADDED
    assert [e.seq for e in store.load("s1", after=2, upto=3)] == [3]
    info = store.session("s1")
    assert (info.status, info.steps, info.last_seq) == ("running", 3, 4)


def test_duplicate_seq_is_a_conflict_not_an_overwrite(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 2), status="running", reason=None, steps=2)
    with pytest.raises(SeqConflict):
        store.append("s1", _events(3, 1), status="running", reason=None, steps=9)
    assert [e.payload.text for e in store.load("s1")[1:]] == [f"note {n}" for n in (2, 3)]
    assert store.session("s1").steps == 2


def test_gap_is_a_conflict(store: EventStore) -> None:
    _created(store)
    with pytest.raises(SeqConflict):
        store.append("s1", _events(5, 1), status="running", reason=None, steps=1)


def test_a_session_id_is_created_once(store: EventStore) -> None:
    _created(store)
    with pytest.raises(SeqConflict, match="already exists"):
        _created(store)


def test_unknown_session(store: EventStore) -> None:
    with pytest.raises(SessionNotFound):
        store.session("nope")
    with pytest.raises(SessionNotFound):
        store.load("nope")
    with pytest.raises(SessionNotFound):
        store.enqueue("nope", "c1", {"kind": "pause"})
    with pytest.raises(SessionNotFound) as raised:
        store.session("x" * 100_000)
    assert len(str(raised.value)) < 200, "a huge id must not be echoed back"


def test_huge_and_negative_bounds_load_without_overflow(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 2), status="running", reason=None, steps=2)
    assert [e.seq for e in store.load("s1", upto=10**30)] == [1, 2, 3]
    assert store.load("s1", after=10**30) == []
    assert store.load("s1", upto=-1) == []


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


def test_the_same_command_queued_twice_is_one_command(store: EventStore) -> None:
    _created(store)
    store.enqueue("s1", "c1", {"kind": "pause"})
    store.enqueue("s1", "c1", {"kind": "pause"})
    assert [c.command_id for c in store.pending("s1")] == ["c1"]


def test_commands_for_an_ended_session_are_refused(store: EventStore) -> None:
    _created(store)
    store.append("s1", _events(2, 1), status="succeeded", reason=None, steps=1)
    with pytest.raises(SessionFinished, match=r"has ended \(succeeded\).*python -m sessions fork s1 --at 2"):
        store.enqueue("s1", "c1", {"kind": "pause"})
    assert store.pending("s1") == []


def test_concurrent_enqueues_get_unique_increasing_orders(store: SqlStore) -> None:
    _created(store)
    threads, per_thread = 6, 15
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def queue(worker: int) -> None:
        try:
            barrier.wait(timeout=60)
            for n in range(per_thread):
                store.enqueue("s1", f"w{worker}-{n}", {"kind": "pause"})
        except BaseException as error:  # noqa: BLE001 - reported by the assert below
            errors.append(error)

    workers = [threading.Thread(target=queue, args=(w,)) for w in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert not any(w.is_alive() for w in workers), "enqueue threads did not finish within 120 s"
    assert errors == []
    with store._engine.connect() as conn:
        orders = conn.execute(sa.text("select order_no from commands where session_id = 's1'")).scalars().all()
    assert sorted(orders) == list(range(1, threads * per_thread + 1)), "order numbers must be unique and dense"
    for worker in range(threads):  # each writer's commands keep the order it queued them in
        mine = [c.command_id for c in store.pending("s1") if c.command_id.startswith(f"w{worker}-")]
        assert mine == [f"w{worker}-{n}" for n in range(per_thread)]


def test_an_unreadable_stored_command_is_reported_not_raised(store: SqlStore) -> None:
    _created(store)
    with store._engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into commands (id, session_id, payload, queued_at, order_no, handled) "
                "values ('bad', 's1', '{not json', 0, 1, false), ('list', 's1', '[1]', 0, 2, false)"
            )
        )
    store.enqueue("s1", "good", {"kind": "pause"})
    queued = store.pending("s1")
    assert [(c.command_id, c.problem is None) for c in queued] == [("bad", False), ("list", False), ("good", True)]


# -- the runner lease --------------------------------------------------------------------------------
# Leases are judged by the store's clock (`clock`): the database's on PostgreSQL, whatever `now` says, so
# these tests pass the clock's time and make a lease older by moving its heartbeat back (`_later`).


def _later(store: SqlStore, session_id: str, seconds: float) -> None:
    """As if `seconds` passed since the session's last heartbeat (no test can move a database's clock)."""
    with store._engine.begin() as conn:
        conn.execute(
            sa.text("update sessions set heartbeat_at = heartbeat_at - :seconds where id = :id"),
            {"seconds": seconds, "id": session_id},
        )


def _beat_age(store: EventStore, session_id: str) -> float:
    """How long ago, by the store's clock, the session's lease last beat."""
    heartbeat = store.session(session_id).heartbeat_at
    assert heartbeat is not None, "the session's lease has a heartbeat"
    return store.clock() - heartbeat


def test_runner_lease(store: SqlStore) -> None:
    _created(store)
    first = store.claim("s1", "a", now=store.clock(), stale_after=15)
    assert first == 1
    _later(store, "s1", 5)
    assert store.claim("s1", "b", now=store.clock(), stale_after=15) is None, "a live lease is not taken"
    _later(store, "s1", 15)
    second = store.claim("s1", "b", now=store.clock(), stale_after=15)
    assert second == 2, "a stale lease is taken, with the next generation"
    store.release("s1", second)
    assert store.claim("s1", "c", now=store.clock(), stale_after=15) == 3


def test_a_lease_whose_holder_is_gone_is_taken_at_once(store: EventStore) -> None:
    _created(store)
    assert store.claim("s1", "host:1:dead", now=store.clock(), stale_after=15, pid=1) == 1
    assert store.claim("s1", "b", now=store.clock(), stale_after=15, gone=lambda owner: False) is None
    assert store.claim("s1", "b", now=store.clock(), stale_after=15, gone=lambda owner: owner == "host:1:dead") == 2
    assert store.claim("s1", "c", now=store.clock(), stale_after=15, gone=lambda owner: owner == "host:1:dead") is None
    info = store.session("s1")
    assert (info.lease_owner, info.lease_gen) == ("b", 2)
    assert abs(_beat_age(store, "s1")) < 5, "the new holder's first heartbeat is its claim"


def test_writes_with_a_lease_that_moved_on_are_refused(store: SqlStore) -> None:
    _created(store)
    old = store.claim("s1", "a", now=store.clock(), stale_after=15)
    assert old is not None
    store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=old, beat=store.clock())
    _later(store, "s1", 1000)
    new = store.claim("s1", "b", now=store.clock(), stale_after=15)
    assert new == old + 1
    taken_at = store.session("s1").heartbeat_at
    store.enqueue("s1", "c1", {"kind": "pause"})
    with pytest.raises(LeaseLost, match="taken over by another runner"):
        store.append(
            "s1", _events(3, 1), status="paused", reason=None, steps=1, handled=["c1"], lease=old, beat=store.clock()
        )
    with pytest.raises(LeaseLost):
        store.heartbeat("s1", old, now=store.clock())
    store.release("s1", old)
    info = store.session("s1")
    assert (info.last_seq, info.status, info.lease_owner, info.heartbeat_at) == (2, "running", "b", taken_at)
    assert [c.command_id for c in store.pending("s1")] == ["c1"], "a refused append marks nothing handled"
    with pytest.raises(SeqConflict):  # a stale sequence with the right lease is still a conflict, not a lost lease
        store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=new)
    store.append("s1", _events(3, 1), status="running", reason=None, steps=2, lease=new)
    _later(store, "s1", 100)
    store.heartbeat("s1", new, now=store.clock())
    assert abs(_beat_age(store, "s1")) < 5, "the holder's heartbeat went through"


def test_a_released_lease_cannot_write(store: EventStore) -> None:
    _created(store)
    lease = store.claim("s1", "a", now=store.clock(), stale_after=15)
    assert lease is not None
    store.release("s1", lease)
    with pytest.raises(LeaseLost):
        store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=lease)
    with pytest.raises(LeaseLost):
        store.heartbeat("s1", lease, now=store.clock())


def test_a_lease_is_judged_stale_by_its_holders_own_length(store: SqlStore) -> None:
    """The lease length goes with the lease: a worker started with a 4 s lease must not take a session
    from a runner with a 15 s one between two of its heartbeats (3 s apart, so up to 3 s old at any
    time, and later on a busy machine), and a 15 s claimer need not wait 15 s after a 4 s holder."""
    _created(store)
    held = store.claim("s1", "cli", now=store.clock(), stale_after=15)
    assert held == 1
    assert store.session("s1").lease_seconds == 15
    _later(store, "s1", 5)
    assert store.claim("s1", "short", now=store.clock(), stale_after=4) is None, "alive by its holder's 15 s"
    assert store.claim_runnable("short", now=store.clock(), stale_after=4, limit=5) == [], "alive for workers too"
    _later(store, "s1", 11)
    assert store.claim_runnable("short", now=store.clock(), stale_after=4, limit=5) == [("s1", 2)], "stale after 15 s"
    assert store.session("s1").lease_seconds == 4, "the new holder's own length"
    _later(store, "s1", 3)
    assert store.claim("s1", "long", now=store.clock(), stale_after=15) is None
    _later(store, "s1", 2)
    assert store.claim("s1", "long", now=store.clock(), stale_after=15) == 3, "stale 4 s after the short holder's beat"
    store.release("s1", 3)
    assert store.session("s1").lease_seconds is None, "no lease, no length"


def test_claim_runnable_takes_the_sessions_that_need_a_runner_and_no_others(store: SqlStore) -> None:
    """Runnable: not ended, no live holder, and running (new, handed back, its runner dead) or with a
    command waiting (a resume, an approval). Not: paused with nothing queued, ended, freshly held."""
    now = store.clock()
    store.create_session("new", "task", "script", _events(1, 1), status="running")
    store.create_session("handed back", "task", "script", _events(1, 1), status="running")
    store.release("handed back", store.claim("handed back", "gone", now=now, stale_after=15) or 0)
    store.create_session("resumed", "task", "script", _events(1, 1), status="paused")
    store.enqueue("resumed", "r1", {"kind": "resume"})
    store.create_session("approved", "task", "script", _events(1, 1), status="awaiting_approval")
    store.enqueue("approved", "a1", {"kind": "approve"})
    store.create_session("dead runner", "task", "script", _events(1, 1), status="running")
    assert store.claim("dead runner", "dead", now=now, stale_after=15) == 1
    _later(store, "dead runner", 16)
    store.create_session("paused", "task", "script", _events(1, 1), status="paused")
    store.create_session("finished", "task", "script", _events(1, 1), status="succeeded")
    store.create_session("fresh lease", "task", "script", _events(1, 1), status="running")
    assert store.claim("fresh lease", "alive", now=now, stale_after=15) == 1
    _later(store, "fresh lease", 5)
    store.create_session("fresh lease, command waiting", "task", "script", _events(1, 1), status="paused")
    store.enqueue("fresh lease, command waiting", "p1", {"kind": "resume"})
    assert store.claim("fresh lease, command waiting", "alive", now=now, stale_after=15) == 1
    _later(store, "fresh lease, command waiting", 5)
    store.create_session("paused, command handled", "task", "script", _events(1, 1), status="paused")
    store.enqueue("paused, command handled", "h1", {"kind": "pause"})
    store.append("paused, command handled", _events(2, 1), status="paused", reason=None, steps=0, handled=["h1"])

    first = store.claim_runnable("w", store.clock(), 15, limit=3, pid=7)
    rest = store.claim_runnable("w", store.clock(), 15, limit=10, pid=7)
    assert len(first) == 3, "no more than the limit"
    assert dict(first + rest) == {"new": 1, "handed back": 2, "resumed": 1, "approved": 1, "dead runner": 2}
    assert store.claim_runnable("w2", store.clock(), 15, limit=10) == [], "each taken once: their leases are fresh now"
    info = store.session("dead runner")
    assert (info.lease_owner, info.runner_pid, info.lease_seconds) == ("w", 7, 15)
    assert abs(_beat_age(store, "dead runner")) < 5, "the new lease's first heartbeat is its claim"


@pytest.mark.backends("postgres")
def test_postgresql_judges_leases_by_its_own_clock_not_the_callers(store: SqlStore) -> None:
    """Runners of one PostgreSQL database may be on many machines: a claimer whose clock runs ahead
    must not take a live lease, and one whose clock lags must still take a stale one."""
    assert abs(store.clock() - time.time()) < 1, "the test's server runs on this machine's clock"
    _created(store)
    ahead, behind = time.time() + 3600, time.time() - 3600
    assert store.claim("s1", "a", now=behind, stale_after=15) == 1
    assert abs(_beat_age(store, "s1")) < 5, "the claim's heartbeat is the database's time, not the caller's"
    assert store.claim("s1", "b", now=ahead, stale_after=15) is None, "a live lease, whatever the claimer's clock"
    assert store.claim_runnable("b", now=ahead, stale_after=15, limit=5) == []
    _later(store, "s1", 1000)
    store.heartbeat("s1", 1, now=behind)
    assert abs(_beat_age(store, "s1")) < 5, "a heartbeat is the database's time"
    _later(store, "s1", 1000)
    store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=1, beat=behind)
    assert abs(_beat_age(store, "s1")) < 5, "so is an append's beat"
    _later(store, "s1", 16)
    assert store.claim("s1", "c", now=behind, stale_after=15) == 2, "a stale lease, whatever the claimer's clock"


@pytest.mark.backends("memory", "disk")
def test_sqlite_judges_leases_by_the_callers_clock(store: EventStore) -> None:
    """SQLite's runners share one machine, so its lease clock is theirs: the times they pass."""
    _created(store)
    assert store.claim("s1", "a", now=1000.0, stale_after=15) == 1
    assert store.claim("s1", "b", now=1005.0, stale_after=15) is None
    store.heartbeat("s1", 1, now=1010.0)
    store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=1, beat=1012.0)
    assert store.session("s1").heartbeat_at == 1012.0
    assert store.claim_runnable("b", now=1027.0, stale_after=15, limit=5) == []
    assert store.claim("s1", "b", now=1028.0, stale_after=15) == 2
    assert abs(store.clock() - time.time()) < 1


# -- schema ------------------------------------------------------------------------------------------


def test_migrations_are_recorded_once(tmp_path: Path) -> None:
    url = database_url(tmp_path / "m.db")
    SqlStore(url).close()
    store = SqlStore(url)
    with store._engine.connect() as conn:
        versions = conn.execute(sa.text("select version from schema_migrations")).scalars().all()
    assert versions == list(range(1, len(_MIGRATIONS) + 1)), "each migration once, in order"
    store.close()


def test_version_two_upgrades_a_first_release_database(tmp_path: Path) -> None:
    """A database written by the first release, with duplicate order numbers from its racy enqueue."""
    from sessions.store.sql import _V1, _migrations_table

    path = tmp_path / "v1.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        _V1.create_all(conn)
        _migrations_table.create(conn)
        conn.execute(_migrations_table.insert().values(version=1, applied_at=0.0))
        conn.execute(
            sa.text(
                "insert into sessions (id, task, model, status, steps, last_seq, created_at, updated_at, runner_pid,"
                " heartbeat_at) values ('s1', 't', 'script', 'running', 0, 0, 0, 0, 4242, 5)"
            )
        )
        conn.execute(
            sa.text(
                "insert into commands (id, session_id, payload, queued_at, order_no, handled) values "
                "('a', 's1', '{}', 1, 1, 0), ('b', 's1', '{}', 2, 2, 0), ('c', 's1', '{}', 3, 2, 0), "
                "('d', 's1', '{}', 4, 3, 0)"
            )
        )
    engine.dispose()
    store = SqlStore(database_url(path))
    assert [c.command_id for c in store.pending("s1")] == ["a", "b", "c", "d"]
    info = store.session("s1")
    assert (info.lease_owner, info.lease_gen, info.runner_pid) == (None, 0, 4242)
    assert info.last_order == 4, "version 3 carries the newest order number on the session row"
    store.enqueue("s1", "e", {"kind": "pause"})
    assert store.session("s1").last_order == 5
    with store._engine.connect() as conn:
        orders = conn.execute(sa.text("select order_no from commands order by order_no")).scalars().all()
    assert orders == [1, 2, 3, 4, 5]
    assert store.claim("s1", "new", now=100.0, stale_after=15) == 1
    store.close()


def test_sessions_listed_newest_first(store: EventStore) -> None:
    _created(store, "a")
    time.sleep(0.01)
    _created(store, "b")
    assert [info.id for info in store.sessions()] == ["b", "a"]


def test_an_append_under_the_lease_with_a_beat_is_a_heartbeat(store: SqlStore) -> None:
    """A runner writing step after step may keep its heartbeat thread waiting for the database's
    lock; its own fenced writes then keep the lease alive."""
    _created(store)
    lease = store.claim("s1", "a", now=store.clock(), stale_after=15)
    assert lease is not None
    _later(store, "s1", 10)
    aged = store.session("s1").heartbeat_at
    store.append("s1", _events(2, 1), status="running", reason=None, steps=1, lease=lease)
    assert store.session("s1").heartbeat_at == aged, "an append without a beat leaves the heartbeat alone"
    store.append("s1", _events(3, 1), status="running", reason=None, steps=2, lease=lease, beat=store.clock())
    assert abs(_beat_age(store, "s1")) < 5, "an append with a beat beats"
    _later(store, "s1", 10)
    assert store.claim("s1", "b", now=store.clock(), stale_after=15) is None, "alive 10 s after the append's beat"


def test_the_listing_keeps_spend_and_when_the_status_last_changed_and_counts_recent_actions(store: EventStore) -> None:
    """The fleet view's columns come from the listing: kept by every append, never by replaying a log."""
    _created(store)
    created = store.session("s1")
    assert (created.cost_usd, created.status_since) == (None, created.created_at)
    old, now = time.time() - 3600, time.time()
    acted = [
        Event(seq, Kind.ACTION_EXECUTED, "0.1", ActionExecuted(url="dry://start", action="click [1]", ok=True), 1, at)
        for seq, at in ((2, old), (3, now))
    ]
    store.append("s1", acted, status="running", reason=None, steps=2, cost_usd=0.25)
    running = store.session("s1")
    assert (running.cost_usd, running.status_since) == (0.25, created.status_since)
    store.append("s1", _events(4, 1), status="paused", reason="breakpoint", steps=2)
    paused = store.session("s1")
    assert paused.cost_usd == 0.25, "an append that does not say keeps it"
    assert paused.status_since is not None and paused.status_since > created.status_since, "the status changed"
    assert store.recent_actions(now - 60) == {"s1": 1}, "only the action of the last minute"
    assert store.recent_actions(old - 1) == {"s1": 2}


def test_inbox_marks_are_each_operators_own_and_the_latest_counts(store: EventStore) -> None:
    """What an operator did with an inbox item (`sessions.client.attention`): kept per operator, a later
    mark replacing the earlier, read back for the items asked about only."""
    store.mark_attention("alice", "s1:approval:buy", "seen", 1.0)
    store.mark_attention("alice", "s2:failed:no plan", "seen", 2.0)
    store.mark_attention("alice", "s2:failed:no plan", "dismissed", 3.0)
    store.mark_attention("bob", "s1:approval:buy", "dismissed", 4.0)
    asked = ["s1:approval:buy", "s2:failed:no plan", "s3:breakpoint:x"]
    assert store.attention_marks("alice", asked) == {"s1:approval:buy": "seen", "s2:failed:no plan": "dismissed"}
    assert store.attention_marks("bob", asked) == {"s1:approval:buy": "dismissed"}
    assert store.attention_marks("carol", asked) == {} and store.attention_marks("alice", []) == {}
