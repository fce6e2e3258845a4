"""The cost cap: a run pauses when its model calls' estimated cost reaches it, and goes on once raised."""

from __future__ import annotations

from conftest import BROWNIE_TASK, Billed, drive, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Resume, SetBudget, Step, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Kind
from planner.state import RunStatus


def test_a_spent_budget_pauses_the_run_and_refuses_to_resume_until_raised() -> None:
    state, log = new_state(BROWNIE_TASK, EngineConfig(max_cost_usd=0.025))
    engine = Engine(state, Billed(), DryEnvironment())
    drive(engine, log)
    assert state.status is RunStatus.PAUSED and state.metrics.model_calls == 3
    assert state.reason == "cost cap reached: $0.0300 spent of $0.025; raise the cap to go on"

    for command in (Resume(), Step()):
        [refused] = apply_command(state, command)
        assert refused.kind is Kind.COMMAND_REJECTED and refused.payload.reason == state.reason

    log += apply_command(state, SetBudget(max_cost_usd=1.0))
    log += apply_command(state, Resume())
    drive(engine, log)
    assert state.status is RunStatus.SUCCEEDED and state.metrics.cost_usd < 1.0


def test_without_a_cap_the_cost_is_only_counted() -> None:
    state, log = new_state(BROWNIE_TASK)
    drive(Engine(state, Billed(), DryEnvironment()), log)
    assert state.status is RunStatus.SUCCEEDED and state.metrics.cost_usd > 0.05


def test_setting_the_same_budget_is_rejected() -> None:
    state, _ = new_state(BROWNIE_TASK, EngineConfig(max_cost_usd=2.0))
    [rejected] = apply_command(state, SetBudget(max_cost_usd=2.0))
    assert rejected.payload.reason == "that is the cost cap already"
    [applied, _] = apply_command(state, SetBudget(max_cost_usd=None))
    assert applied.kind is Kind.CONFIG_CHANGED and state.over_budget is None


def test_a_recorded_negative_or_garbage_cost_cannot_lower_the_spend() -> None:
    """A log written before usage was validated may hold a negative cost; the fold ignores it, so a
    cap still triggers."""
    from planner.state import Recorder

    state, _ = new_state(BROWNIE_TASK, EngineConfig(max_cost_usd=0.5))
    recorder = Recorder(state)
    for usage in (
        {"input_tokens": 10, "cost_usd": 1.0},
        {"input_tokens": -5_000_000, "cost_usd": -8999.99},
        {"input_tokens": "many", "cost_usd": float("nan")},
        {"input_tokens": True, "cost_usd": float("inf")},
    ):
        recorder.record(Kind.MODEL_CALL, "0", operator="expand", attempt=1, ok=True, usage=usage)
    assert state.metrics.cost_usd == 1.0
    assert state.metrics.input_tokens == 10
    assert state.over_budget is not None
