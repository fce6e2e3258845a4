"""A database an earlier version made still opens and works as a new one: schema version 3 (no
`cause` on the session rows, status events at version 1) gets each session's cause from its log;
schema version 6 (no lease length) keeps the leases its runners hold, judged by the claimer's length;
schema version 8 gives a succeeded session whose answer met its check "answer checked" as its cause.

Each old database is made by the migrations up to its version themselves (they are only ever
appended to), its rows written as that version wrote them, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import BROWNIE_TASK, answered, drive, new_state
from postgres import database_for, migrated_to

from planner.browser.dry import DryEnvironment
from planner.commands import Pause, apply_command
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.events import Cause, Event, Kind, NoteAdded
from planner.models.scripted import Script, ScriptedModel
from planner.state import SessionState
from sessions.client.attention import Need, needing_attention
from sessions.store.sql import _MIGRATIONS, SqlStore

BUY = Script.model_validate(
    {
        "nodes": {
            BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
            "buy": {"type": "ACTION", "action": "click [9]"},
        }
    }
)


def _held(points: frozenset[Breakpoint] = frozenset(), guard: bool = False) -> tuple[SessionState, list[Event]]:
    state, log = new_state(BROWNIE_TASK, EngineConfig(constraints=False, breakpoints=points))
    engine = Engine(
        state, ScriptedModel(BUY), DryEnvironment(), guard=(lambda action, target: "buy") if guard else None
    )
    drive(engine, log, 20)
    return state, log


def _sessions() -> dict[str, tuple[SessionState, list[Event], Cause]]:
    """Sessions the old version could have left, by id: (state, log, the cause they should get)."""
    step_state, step_log = new_state(BROWNIE_TASK)
    step_log += apply_command(step_state, Pause())
    return {
        "breakpoint": (*_held(frozenset({Breakpoint.BEFORE_ACTION})), Cause.BREAKPOINT),
        "review": (*_held(frozenset({Breakpoint.AFTER_EXPANSION})), Cause.PLAN_REVIEW),
        "approval": (*_held(guard=True), Cause.APPROVAL),
        "finished": (*_held(), Cause.FINISHED),
        "created": (*new_state(BROWNIE_TASK), Cause.OPERATOR),
        "paused": (step_state, step_log, Cause.OPERATOR),
    }


@pytest.fixture(params=["disk", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database on SQLite (a file) or PostgreSQL."""
    return database_for(request.param, request, tmp_path)


@pytest.fixture
def old_database(backend: str) -> Iterator[str]:
    """A database at schema version 3 holding `_sessions()` as that version wrote them."""
    url = backend
    engine = migrated_to(url, 3)
    with engine.begin() as conn:
        for session_id, (state, log, _) in _sessions().items():
            conn.execute(
                sa.text(
                    "insert into sessions (id, task, model, status, reason, steps, last_seq, created_at, updated_at)"
                    " values (:id, :task, 'script', :status, :reason, :steps, :last, 1, 2)"
                ),
                {
                    "id": session_id,
                    "task": state.task,
                    "status": state.status.value,
                    "reason": state.reason,
                    "steps": state.steps,
                    "last": state.seq,
                },
            )
            conn.execute(
                sa.text(
                    "insert into events (session_id, seq, kind, version, node_id, data, at)"
                    " values (:session_id, :seq, :kind, :version, :node_id, :data, 0)"
                ),
                [_as_stored_by_version_3(session_id, event) for event in log],
            )
    engine.dispose()
    yield url


def _as_stored_by_version_3(session_id: str, event: Event) -> dict[str, object]:
    data, version = event.data, event.version
    if event.kind is Kind.SESSION_STATUS:
        data, version = {key: value for key, value in data.items() if key != "cause"}, 1
    return {
        "session_id": session_id,
        "seq": event.seq,
        "kind": event.kind.value,
        "version": version,
        "node_id": event.node_id,
        "data": json.dumps(data),
    }


def test_a_database_of_the_previous_version_opens_with_each_sessions_cause(old_database: str) -> None:
    store = SqlStore(old_database)
    try:
        listing = {info.id: info for info in store.sessions()}
        expected = {session_id: cause for session_id, (_, _, cause) in _sessions().items()}
        assert {session_id: info.cause for session_id, info in listing.items()} == expected
        with store._engine.connect() as conn:
            versions = conn.execute(sa.text("select version from schema_migrations order by version")).scalars()
            assert list(versions) == list(range(1, len(_MIGRATIONS) + 1)), "each migration once, in order"
        needs = {item.session_id: item.need for item in needing_attention(listing.values())}
        assert needs == {"breakpoint": Need.BREAKPOINT, "review": Need.BREAKPOINT, "approval": Need.APPROVAL}
        info = listing["paused"]
        store.append(
            "paused",
            [Event(info.last_seq + 1, Kind.NOTE_ADDED, None, NoteAdded(text="after the upgrade"), 1, 0.0)],
            status="paused",
            cause=Cause.ERROR.value,
            reason="a problem",
            steps=info.steps,
        )
        assert store.session("paused").cause == "error", "an append after the upgrade keeps the cause"
    finally:
        store.close()
    reopened = SqlStore(old_database)
    try:
        assert reopened.session("paused").cause == "error", "the migration ran once"
    finally:
        reopened.close()


def test_a_lease_held_under_version_six_is_kept_and_judged_by_the_claimers_length(backend: str) -> None:
    """A runner of the previous version holds a session (its heartbeat 2 s old; nobody recorded its
    length): after the upgrade it is still held until a claimer's own length says it is stale, as
    before, and the lease taken then records its length. (Its heartbeat is made older by moving it
    back: on PostgreSQL leases are judged by the database's clock, whatever `now` says.)"""
    engine = migrated_to(backend, 6)
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "insert into sessions (id, task, model, status, steps, last_seq, created_at, updated_at, runner_pid,"
                " heartbeat_at, lease_owner, lease_gen) values ('held', 't', 'script', 'running', 0, 0, 1, 2, 4242,"
                " :beat, 'old-host:4242:abc', 3)"
            ),
            {"beat": time.time() - 2},
        )
    engine.dispose()
    store = SqlStore(backend)
    try:
        info = store.session("held")
        assert (info.lease_owner, info.lease_gen, info.lease_seconds) == ("old-host:4242:abc", 3, None)
        assert store.claim("held", "new", now=store.clock(), stale_after=4) is None, "alive by the claimer's 4 s"
        assert store.claim_runnable("new", now=store.clock(), stale_after=4, limit=1) == []
        with store._engine.begin() as conn:
            conn.execute(sa.text("update sessions set heartbeat_at = heartbeat_at - 3 where id = 'held'"))
        assert store.claim_runnable("new", now=store.clock(), stale_after=4, limit=1) == [("held", 4)]
        assert store.session("held").lease_seconds == 4, "the new lease keeps its length"
        with store._engine.connect() as conn:
            versions = conn.execute(sa.text("select version from schema_migrations order by version")).scalars()
            assert list(versions) == list(range(1, len(_MIGRATIONS) + 1)), "each migration once, in order"
    finally:
        store.close()


def _checked_run() -> tuple[str, list[Event]]:
    """A bundled task's run whose answer meets its check: (its task, its log)."""
    store = SqlStore("sqlite://")
    session_id, task = answered(store, "The Northwind Metro 18L at $54.99")
    assert store.session(session_id).cause == Cause.ANSWER_CHECKED.value
    return task, store.load(session_id)


def test_a_checked_answer_finished_under_version_eight_is_listed_as_checked(backend: str) -> None:
    """Before version 9 the row of a succeeded session said "finished" whether or not its answer met
    its check; lists now read that as an answer nothing confirmed, while its page (a fold of the
    log) says "answer checked". The migration gives such rows their cause, and leaves the others."""
    task, checked = _checked_run()
    unchecked_state, unchecked = _held()
    engine = migrated_to(backend, 8)
    with engine.begin() as conn:
        for session_id, (text, log) in {"checked": (task, checked), "unchecked": (BROWNIE_TASK, unchecked)}.items():
            conn.execute(
                sa.text(
                    "insert into sessions (id, task, model, status, reason, steps, last_seq, created_at, updated_at,"
                    " cause) values (:id, :task, 'script', 'succeeded', null, 1, :last, 1, 2, 'finished')"
                ),
                {"id": session_id, "task": text, "last": log[-1].seq},
            )
            conn.execute(
                sa.text(
                    "insert into events (session_id, seq, kind, version, node_id, data, at)"
                    " values (:session_id, :seq, :kind, :version, :node_id, :data, 0)"
                ),
                [
                    {"session_id": session_id, "seq": e.seq, "kind": e.kind.value, "version": e.version}
                    | {"node_id": e.node_id, "data": json.dumps(e.data)}
                    for e in log
                ],
            )
    engine.dispose()
    assert unchecked_state.status.value == "succeeded"
    store = SqlStore(backend)
    try:
        assert store.session("checked").cause == Cause.ANSWER_CHECKED.value
        assert store.session("unchecked").cause == Cause.FINISHED.value, "no check: still only answered"
    finally:
        store.close()
