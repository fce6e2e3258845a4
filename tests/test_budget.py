"""The cost cap: a run pauses when its model calls' estimated cost reaches it, and goes on once raised."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, Billed, drive, new_state
from fake_anthropic import FakeAnthropic

from planner.browser.dry import DryEnvironment
from planner.commands import Resume, SetBudget, Step, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind, ModelCalled
from planner.state import Recorder, RunStatus, SessionState


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
    state, _ = new_state(BROWNIE_TASK, EngineConfig(max_cost_usd=0.5))
    recorder = Recorder(state)
    for usage in (
        {"input_tokens": 10, "cost_usd": 1.0},
        {"input_tokens": -5_000_000, "cost_usd": -8999.99},
        {"input_tokens": "many", "cost_usd": float("nan")},
        {"input_tokens": True, "cost_usd": float("inf")},
    ):
        recorder.record(Kind.MODEL_CALL, "0", question="expand", attempt=1, ok=True, usage=usage)
    assert state.metrics.cost_usd == 1.0
    assert state.metrics.input_tokens == 10
    assert state.over_budget is not None


# -- a Claude model the table cannot price ----------------------------------------------------------

UNKNOWN = "claude-future-9"
_ANSWERS = {
    ("extract_constraints", BROWNIE_TASK): {"items": [], "task": []},
    ("expand_node", "*"): {"type": "ACTION", "action": "note [Fudgy vegan brownies: 4.8 stars]"},
    ("observe_page", "*"): {"summary": "a page"},
    ("check_completion", "*"): {"complete": True, "reason": "noted", "answer": "Fudgy vegan brownies"},
    ("final_answer", "*"): {"answer": "Fudgy vegan brownies, 4.8 stars"},
}


def _claude_session(
    monkeypatch: pytest.MonkeyPatch, fake: FakeAnthropic, config: EngineConfig
) -> tuple[SessionState, list[Event]]:
    from sessions.backends import build_backend

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-budget")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    state = SessionState()
    Recorder(state).record(
        Kind.SESSION_CREATED,
        task=BROWNIE_TASK,
        model=f"claude:{UNKNOWN}",
        model_data={},
        start_url="dry://start",
        config=config.model_dump(mode="json"),
    )
    log: list[Event] = []
    drive(Engine(state, build_backend(state).model, DryEnvironment()), log)
    return state, log


def test_an_unpriced_model_with_a_cost_cap_pauses_before_its_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANDOR_PRICE_IN", raising=False)
    monkeypatch.delenv("ANDOR_PRICE_OUT", raising=False)
    with FakeAnthropic(dict(_ANSWERS)) as fake:
        state, _ = _claude_session(monkeypatch, fake, EngineConfig(max_cost_usd=1.0))
        assert fake.requests == [], "not one call without a price"
        assert state.status is RunStatus.PAUSED and state.reason is not None
        assert "price" in state.reason and "--price-in and --price-out" in state.reason
        assert "ANDOR_PRICE_IN and ANDOR_PRICE_OUT" in state.reason

        monkeypatch.setenv("ANDOR_PRICE_IN", "3")
        monkeypatch.setenv("ANDOR_PRICE_OUT", "15")
        from sessions.backends import build_backend

        log = apply_command(state, Resume())
        resumed = Engine(state, build_backend(state).model, DryEnvironment())
        drive(resumed, log)
    assert state.status is RunStatus.SUCCEEDED and state.metrics.cost_usd > 0, "priced from the environment"


def test_the_sessions_own_prices_bill_an_unknown_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDOR_PRICE_IN", "not a number")  # the session's own prices come first
    with FakeAnthropic(dict(_ANSWERS)) as fake:
        state, log = _claude_session(monkeypatch, fake, EngineConfig(max_cost_usd=5.0, model_prices=(3.0, 15.0)))
    assert state.status is RunStatus.SUCCEEDED
    costs = [e.payload.usage["cost_usd"] for e in log if isinstance(e.payload, ModelCalled)]
    assert costs and all(cost > 0 for cost in costs) and state.metrics.cost_usd == pytest.approx(sum(costs))


def test_without_a_cap_an_unpriced_model_runs_and_its_cost_stays_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANDOR_PRICE_IN", raising=False)
    monkeypatch.delenv("ANDOR_PRICE_OUT", raising=False)
    with FakeAnthropic(dict(_ANSWERS)) as fake:
        state, _ = _claude_session(monkeypatch, fake, EngineConfig())
    assert state.status is RunStatus.SUCCEEDED and state.metrics.cost_usd == 0.0


@pytest.mark.parametrize(("price_in", "price_out"), [("abc", "1"), ("2", ""), ("0", "5"), ("5", "1e9")])
def test_prices_in_the_environment_that_are_not_prices_are_refused_in_a_sentence(
    monkeypatch: pytest.MonkeyPatch, price_in: str, price_out: str
) -> None:
    from sessions.backends import build_backend
    from sessions.errors import UnknownModel

    monkeypatch.setenv("ANDOR_PRICE_IN", price_in)
    monkeypatch.setenv("ANDOR_PRICE_OUT", price_out)
    state = SessionState()
    Recorder(state).record(
        Kind.SESSION_CREATED, task=BROWNIE_TASK, model=f"claude:{UNKNOWN}", model_data={}, start_url="dry://start"
    )
    with pytest.raises(UnknownModel, match="ANDOR_PRICE_IN and ANDOR_PRICE_OUT must both be prices in USD per million"):
        build_backend(state)


def test_run_takes_a_price_for_a_model_the_table_lacks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`--price-in/--price-out` are stored with the session, so a capped run of an unknown id can spend."""
    from cli_helpers import cli, last_json

    db = str(tmp_path / "sessions.db")
    monkeypatch.delenv("ANDOR_PRICE_IN", raising=False)
    monkeypatch.delenv("ANDOR_PRICE_OUT", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-budget")
    task = ["--db", db, "run", "--task", BROWNIE_TASK, "--model", f"claude:{UNKNOWN}", "--max-cost", "2"]
    with FakeAnthropic(dict(_ANSWERS)) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        paused = last_json(cli(*task, "--exit-on-pause"))
        assert paused["status"] == "paused" and fake.requests == [], paused
        priced = last_json(cli(*task, "--price-in", "3", "--price-out", "15"))
    from sessions.store.reading import load_state
    from sessions.store.sql import open_store

    store = open_store(db)
    try:
        state = load_state(store, priced["session_id"])
    finally:
        store.close()
    assert priced["status"] == "succeeded" and state.config.model_prices == (3.0, 15.0), priced
    assert 0 < state.metrics.cost_usd < 2
    bad = cli(*task, "--price-in", "3", check=False)
    assert bad.returncode == 2 and "give --price-in and --price-out together" in bad.stderr
