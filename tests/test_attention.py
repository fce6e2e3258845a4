"""The attention inbox's rule (`sessions.client.attention`): which sessions need the operator, why, in what order.

The causes come from the code that records them (the engine's breakpoints, the operator's commands, a
fork, the runner, the store's listing), so a pause recorded with the wrong cause fails here instead
of silently moving a session in or out of the inbox; the reason's wording decides nothing.
"""

from __future__ import annotations

import dataclasses

import pytest
from conftest import BROWNIE_TASK, Billed, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Pause, Reject, Step, apply_command
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.errors import ModelUnavailable
from planner.events import Cause
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, SessionState
from sessions.backends import Backend
from sessions.client.attention import WHY_CHARS, Attention, Need, inbox, needing_attention
from sessions.client.creation import create_session, fork_session
from sessions.store import SessionInfo
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner

BUY = Script.model_validate(
    {
        "nodes": {
            BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
            "buy": {"type": "ACTION", "action": "click [9]"},
        }
    }
)
"""A plan of one browser action, so a guard or a breakpoint holds the run before it."""


def row(
    session_id: str,
    status: str,
    reason: str | None = None,
    cause: Cause | None = None,
    *,
    at: float = 100.0,
    task: str = "a task",
) -> SessionInfo:
    return SessionInfo(session_id, task, "script", status, reason, 3, 10, 1.0, at, cause=cause)


def listed(state: SessionState, session_id: str = "s") -> SessionInfo:
    """The listing row the runner writes for this state (`Runner._persist`: its status, cause and reason)."""
    return row(session_id, state.status.value, state.reason, state.cause)


def run_until_held(state: SessionState, engine: Engine) -> None:
    for _ in range(20):
        engine.step()
        if state.status is not RunStatus.RUNNING:
            return
    raise AssertionError(f"the run never stopped: {state.status}")


def held(config: EngineConfig | None = None, guard: bool = False) -> SessionState:
    state, _ = new_state(BROWNIE_TASK, config)
    engine = Engine(
        state, ScriptedModel(BUY), DryEnvironment(), guard=(lambda action, target: "buy button") if guard else None
    )
    run_until_held(state, engine)
    return state


def needs(info: SessionInfo) -> tuple[Need, str] | None:
    found = needing_attention([info])
    return (found[0].need, found[0].why) if found else None


def test_an_action_waiting_for_approval_needs_the_operator() -> None:
    state = held(guard=True)
    assert state.status is RunStatus.AWAITING_APPROVAL
    assert needs(listed(state)) == (Need.APPROVAL, "approval required: buy button")


def test_breakpoints_and_plan_review_need_the_operator() -> None:
    before = held(EngineConfig(breakpoints=frozenset({Breakpoint.BEFORE_ACTION})))
    assert needs(listed(before)) == (Need.BREAKPOINT, "breakpoint: before 0.1 (click [9])")
    review = held(EngineConfig(breakpoints=frozenset({Breakpoint.AFTER_EXPANSION})))
    assert needs(listed(review)) == (Need.BREAKPOINT, "plan review: 0 expanded as AND")


def test_a_problem_that_paused_the_run_needs_the_operator() -> None:
    class Down(ScriptedModel):
        def expand(self, view):  # type: ignore[no-untyped-def]
            raise ModelUnavailable("529 overloaded after 3 retries")

    state, _ = new_state(BROWNIE_TASK)
    Engine(state, Down(BUY), DryEnvironment()).step()
    assert needs(listed(state)) == (Need.ERROR, "paused: model unavailable: 529 overloaded after 3 retries")

    capped, _ = new_state(BROWNIE_TASK, EngineConfig(max_cost_usd=0.015))
    run_until_held(capped, Engine(capped, Billed(), DryEnvironment()))
    need = needs(listed(capped))
    assert need is not None and need[0] is Need.ERROR and need[1].startswith("paused: cost cap reached"), need


class _Crashing(DryEnvironment):
    def observe(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("Page.click: Target page, context or browser has been closed\n  at line 3")


def test_a_runner_that_failed_or_was_stopped_leaves_a_problem_in_the_stores_listing() -> None:
    store = SqlStore("sqlite://")
    crashed = create_session(store, BROWNIE_TASK, "demo", config=EngineConfig(constraints=False))
    with pytest.raises(RuntimeError):
        Runner(store, crashed, Backend(ScriptedModel(BUY), _Crashing())).run()
    stopped = create_session(store, BROWNIE_TASK, "demo")
    Runner(store, stopped, Backend(ScriptedModel(BUY), DryEnvironment())).run(should_stop=lambda: True)
    listing = {info.id: info for info in store.sessions()}
    assert listing[crashed].cause == Cause.ERROR and listing[stopped].cause == Cause.INTERRUPTED, listing
    assert needs(listing[crashed]) == (
        Need.ERROR,
        "paused: Page.click: Target page, context or browser has been closed",
    )
    assert needs(listing[stopped]) == (Need.ERROR, "paused: runner stopped; resume to continue")


def test_a_breakpoint_reached_by_the_runner_is_one_in_the_stores_listing() -> None:
    store = SqlStore("sqlite://")
    config = EngineConfig(breakpoints=frozenset({Breakpoint.BEFORE_ACTION}))
    session_id = create_session(store, BROWNIE_TASK, "demo", config=config)
    runner = Runner(store, session_id, Backend(ScriptedModel(BUY), DryEnvironment()))
    runner.run(should_stop=lambda: runner.state.status is not RunStatus.RUNNING)
    info = store.session(session_id)
    assert (info.status, info.cause) == ("paused", Cause.BREAKPOINT), info
    assert needs(info) == (Need.BREAKPOINT, "breakpoint: before 0.1 (click [9])")


def test_the_cause_decides_and_the_reasons_wording_does_not() -> None:
    assert needs(row("s", "paused", "breakpoint: looks like one", Cause.OPERATOR)) is None
    assert needs(row("s", "paused", "paused by operator", Cause.ERROR)) == (Need.ERROR, "paused: paused by operator")
    assert needs(row("s", "paused", "paused by operator", Cause.PLAN_REVIEW)) == (Need.BREAKPOINT, "paused by operator")
    assert needs(row("s", "paused", "cost budget spent", Cause.BUDGET))[0] is Need.ERROR  # type: ignore[index]
    assert needs(row("s", "paused", None, Cause.ERROR)) == (Need.ERROR, "paused by a problem")


def test_a_pause_whose_writer_gave_no_cause_is_shown_as_a_problem() -> None:
    assert needs(row("s", "paused", "worker could not build a runner")) == (
        Need.ERROR,
        "paused: worker could not build a runner",
    )


def test_a_failed_session_needs_the_operator() -> None:
    assert needs(row("s", "failed", "step budget of 5 exhausted")) == (
        Need.FAILED,
        "failed: step budget of 5 exhausted",
    )
    assert needs(row("s", "failed")) == (Need.FAILED, "failed")


def test_the_operators_own_pauses_need_nothing() -> None:
    state, _ = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(BUY), DryEnvironment())
    engine.step()
    apply_command(state, Pause())
    assert needs(listed(state)) is None, state.reason
    apply_command(state, Step())
    engine.step()
    assert state.reason == "paused after one step" and needs(listed(state)) is None

    rejected = held(guard=True)
    apply_command(rejected, Reject(reason="wrong item", pause=True))
    assert rejected.status is RunStatus.PAUSED and needs(listed(rejected)) is None, rejected.reason


def test_starting_paused_and_forking_need_nothing_in_the_stores_listing() -> None:
    store = SqlStore("sqlite://")
    started = create_session(store, BROWNIE_TASK, "demo", paused=True)
    create_session(store, BROWNIE_TASK, "demo")
    forked = fork_session(store, started, 1)
    assert {info.id: info.status for info in store.sessions()}[forked] == "paused"
    assert needing_attention(store.sessions()) == []


def test_running_stopped_and_succeeded_sessions_need_nothing() -> None:
    rows = [
        row("a", "running", None, Cause.OPERATOR),
        row("b", "stopped", "stopped by operator", Cause.OPERATOR),
        row("c", "succeeded", None, Cause.FINISHED),
    ]
    assert needing_attention(rows) == []


def test_most_urgent_first_and_newest_first_within() -> None:
    rows = [
        row("bp-old", "paused", "breakpoint: before 0.1 (click [1])", Cause.BREAKPOINT, at=10),
        row("failed-old", "failed", "no plan worked", Cause.FINISHED, at=20),
        row("approval-old", "awaiting_approval", "approval required: buy button", Cause.APPROVAL, at=30),
        row("mine", "paused", "paused by operator", Cause.OPERATOR, at=90),
        row("error-new", "paused", "model unavailable: timeout", Cause.ERROR, at=60),
        row("bp-new", "paused", "plan review: 0 expanded as AND", Cause.PLAN_REVIEW, at=70),
        row("approval-new", "awaiting_approval", "approval required: pay", Cause.APPROVAL, at=50),
        row("failed-new", "failed", "no plan worked", Cause.FINISHED, at=80),
    ]
    order = [item.session_id for item in needing_attention(rows)]
    assert order == ["approval-new", "approval-old", "failed-new", "error-new", "failed-old", "bp-new", "bp-old"]


def test_the_why_is_one_short_line() -> None:
    [item] = needing_attention([row("s", "paused", "browser crashed\n  at line 3\n" + "x" * 500, Cause.ERROR)])
    assert "\n" not in item.why and len(item.why) == WHY_CHARS and item.why.startswith("paused: browser crashed at")


def test_each_need_of_a_session_has_its_own_key() -> None:
    first = Attention("s", Need.APPROVAL, "approval required: buy button", "task", 1.0)
    later = dataclasses.replace(first, since=2.0)
    other = dataclasses.replace(first, why="approval required: pay")
    assert first.key == later.key != other.key != dataclasses.replace(first, session_id="t").key


def test_an_operators_inbox_leaves_out_what_they_dismissed_and_tells_new_from_seen() -> None:
    items = needing_attention([row("a", RunStatus.AWAITING_APPROVAL), row("b", RunStatus.FAILED, reason="x")])
    keys = [item.key for item in items]
    assert [(i.attention.session_id, i.seen) for i in inbox(items, {})] == [("a", False), ("b", False)]
    assert [(i.attention.session_id, i.seen) for i in inbox(items, {keys[0]: "seen"})] == [("a", True), ("b", False)]
    assert [i.attention.session_id for i in inbox(items, {keys[1]: "dismissed"})] == ["a"]


def test_a_rejection_with_nothing_left_to_try_is_a_problem_in_the_inbox() -> None:
    [item] = needing_attention([row("a", RunStatus.PAUSED, cause=Cause.NO_ALTERNATIVE, reason="nothing is left")])
    assert item.need is Need.ERROR and item.why == "paused: nothing is left"
