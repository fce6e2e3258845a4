"""`session_status` version 2: every status change says its cause, and a version 1 event (which said
why only in its reason) is given the cause the current code records for that reason, on load.

The events come from the code that writes them (the engine's pauses, the operator's commands, the
runner's stops), so a new pause recorded without its cause, or a reason the upcaster reads wrongly,
fails here.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, Billed, drive, load, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Pause, Reject, Resume, Step, Stop, apply_command
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.errors import ModelUnavailable
from planner.events import SCHEMA_VERSIONS, Cause, Event, Kind, SessionStatus, upgrade
from planner.inputs import InputError
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, replay
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner

BUY = Script.model_validate(
    {
        "nodes": {
            BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
            "buy": {"type": "ACTION", "action": "click [9]"},
        }
    }
)


class _Down(ScriptedModel):
    def expand(self, view):  # type: ignore[no-untyped-def]
        raise ModelUnavailable("529 overloaded after 3 retries")


class _Crashing(DryEnvironment):
    def observe(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("Target page, context or browser has been closed")


def _engine_run(script: Script, config: EngineConfig, model: object = None, guard: bool = False) -> list[Event]:
    state, log = new_state(BROWNIE_TASK, config)
    engine = Engine(
        state,
        model or ScriptedModel(script),  # type: ignore[arg-type]
        DryEnvironment(script.fail_actions),
        guard=(lambda action, target: "buy button") if guard else None,
    )
    drive(engine, log, 50)
    if state.status is RunStatus.AWAITING_APPROVAL:  # the operator's answers to a held action
        log += apply_command(state, Reject(reason="wrong item", pause=True))
        log += apply_command(state, Resume())
    elif state.status is RunStatus.PAUSED and state.cause is not Cause.ERROR:
        log += apply_command(state, Step())
        drive(engine, log, 50)
        log += apply_command(state, Resume())
        log += apply_command(state, Pause())
        log += apply_command(state, Stop())
    return log


def _runner_stops(tmp_path: Path) -> list[Event]:
    store = SqlStore(database_url(tmp_path / "runs.db"))
    stopped = create_session(store, BROWNIE_TASK, "demo")
    Runner(store, stopped, Backend(ScriptedModel(BUY), DryEnvironment())).run(should_stop=lambda: True)
    crashed = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    with pytest.raises(RuntimeError):
        Runner(store, crashed, Backend(ScriptedModel(BUY), _Crashing())).run()
    return store.load(stopped) + store.load(crashed)


def _every_status_change(tmp_path: Path) -> list[Event]:
    """Session status events as the product writes them, one or more of every cause it records."""
    plain = EngineConfig(constraints=False)
    log = [
        *_engine_run(BUY, plain.model_copy(update={"breakpoints": frozenset({Breakpoint.BEFORE_ACTION})})),
        *_engine_run(BUY, plain.model_copy(update={"breakpoints": frozenset({Breakpoint.AFTER_EXPANSION})})),
        *_engine_run(load("brownie_fail.json"), EngineConfig(breakpoints=frozenset(Breakpoint))),
        *_engine_run(BUY, plain, guard=True),
        *_engine_run(BUY, plain, model=_Down(BUY)),
        *_engine_run(BUY, EngineConfig(max_cost_usd=0.015), model=Billed()),
        *_runner_stops(tmp_path),
    ]
    return [event for event in log if event.kind is Kind.SESSION_STATUS]


_V1_WORDS = (("cost cap reached: ", "cost budget spent: "),)
"""Reasons reworded since version 1, as (today's start, the start that code wrote)."""


def _as_version_1(event: Event) -> dict:
    """The event's payload as the code before version 2 wrote it: no cause, the reason in its words."""
    data = {key: value for key, value in event.data.items() if key != "cause"}
    for today, then in _V1_WORDS:
        if (data.get("reason") or "").startswith(today):
            data["reason"] = then + data["reason"][len(today) :]
    return data


def _upgraded(event: Event) -> SessionStatus:
    """`event`'s payload read back from its version 1 copy, with today's reason (the upcaster keeps the old words)."""
    old = Event.from_data(event.seq, Kind.SESSION_STATUS.value, event.node_id, _as_version_1(event), version=1)
    assert old.version == 2
    payload = old.payload
    assert isinstance(payload, SessionStatus)
    return payload.model_copy(update={"reason": event.payload.reason})  # type: ignore[attr-defined]


def test_session_status_is_at_version_2() -> None:
    assert SCHEMA_VERSIONS[Kind.SESSION_STATUS] == SessionStatus.VERSION == 2


def test_every_status_change_the_product_makes_says_its_cause_and_a_version_1_copy_reads_the_same(
    tmp_path: Path,
) -> None:
    changes = _every_status_change(tmp_path)
    causes = {event.payload.cause for event in changes}  # type: ignore[attr-defined]
    assert None not in causes, [event.data for event in changes if event.payload.cause is None]  # type: ignore[attr-defined]
    recorded = {Cause.OPERATOR, Cause.STEP, Cause.BREAKPOINT, Cause.PLAN_REVIEW, Cause.BUDGET, Cause.ERROR}
    assert causes == recorded | {Cause.INTERRUPTED}, causes
    for event in changes:
        assert _upgraded(event) == event.payload, f"{event.data} read back from version 1"


def test_the_upcaster_reads_a_reason_it_does_not_know() -> None:
    paused = upgrade("session_status", 1, {"status": "paused", "reason": "Page.goto: net::ERR_CONNECTION_REFUSED"})
    assert paused["cause"] == Cause.ERROR
    assert upgrade("session_status", 1, {"status": "paused"})["cause"] == Cause.OPERATOR  # as the inbox read it
    assert upgrade("session_status", 1, {"status": "running", "reason": "anything"})["cause"] == Cause.OPERATOR
    assert upgrade("session_status", 2, {"status": "paused", "cause": "step"}) == {"status": "paused", "cause": "step"}


def test_a_version_1_status_that_does_not_fit_is_refused_in_one_sentence() -> None:
    with pytest.raises(InputError, match=r"^event 4 \(session_status\) does not fit its schema: reason"):
        Event.from_data(4, "session_status", None, {"status": "paused", "reason": ["x"]}, version=1)


def test_an_old_log_in_the_store_folds_to_the_cause(tmp_path: Path) -> None:
    log = _engine_run(BUY, EngineConfig(constraints=False, breakpoints=frozenset({Breakpoint.AFTER_EXPANSION})))
    first = next(e for e in log if e.kind is Kind.SESSION_STATUS)
    at = log.index(first) + 1
    db = tmp_path / "old.db"
    store = SqlStore(database_url(db))
    store.create_session("s1", BROWNIE_TASK, "script", log[:at], status="paused")
    store.close()
    with sqlite3.connect(db) as conn:  # the row as the code before version 2 wrote it
        conn.execute(
            "UPDATE events SET version = 1, data = ? WHERE seq = ?", (json.dumps(_as_version_1(first)), first.seq)
        )
    store = SqlStore(database_url(db))
    try:
        loaded = store.load("s1")
    finally:
        store.close()
    assert loaded[-1].version == 2 and loaded[-1].payload == first.payload
    state = replay(loaded)
    assert (state.status, state.cause, state.reason) == (RunStatus.PAUSED, Cause.PLAN_REVIEW, first.payload.reason)  # type: ignore[attr-defined]
