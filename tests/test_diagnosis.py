"""Diagnosis of a failed run: the offline rules, citation checks and retries, the Claude path against
the fake Messages API, and storing a diagnosis with a finished session."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BROWNIE_TASK, SCRIPTS, load, run_script
from fake_anthropic import FakeAnthropic

from planner.config import EngineConfig
from planner.diagnosis import (
    check_citations,
    diagnose,
    offline_diagnosis,
    steps,
    trajectory,
)
from planner.errors import ModelOutputError
from planner.events import Event, Kind
from planner.models.claude import ClaudeModel
from planner.models.prompts import render_diagnosis
from planner.models.scripted import Script
from planner.questions import CallRecord, CriticalStep, Diagnosis, FailureCategory, Reply
from planner.state import RunStatus, SessionState, replay
from sessions.client.creation import create_session
from sessions.client.diagnose import diagnose_command, diagnose_session
from sessions.client.export import markdown_report
from sessions.errors import SessionInputError
from sessions.store.sql import SqlStore, database_url
from sessions.worker.runner import Runner

TOOL = "diagnose_failure"


def _failed_brownie() -> tuple[SessionState, list[Event]]:
    """OR exhausted without repair: 0.2.1 (click [31]) and 0.2.2 (click [32]) fail, the session fails."""
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK, EngineConfig(repair=False))
    assert state.status is RunStatus.FAILED
    return state, log


def _good(step: int = 2, node: str | None = "0.2.1") -> dict[str, Any]:
    return {
        "root_cause": "Both recipe links were missing from the results page.",
        "critical_steps": [
            {"step_number": step, "node_id": node, "what_happened": "clicked recipe A", "what_went_wrong": "no link"}
        ],
        "what_should_have_been_done": "Search again and open a recipe the page lists.",
        "failure_category": "navigation_error",
        "confidence": 4,
    }


# -- the step sequence and the offline rules --------------------------------------------------------


def test_the_step_sequence_numbers_every_action_with_its_node_and_outcome() -> None:
    _, log = _failed_brownie()
    found = steps(log)
    assert [(s.number, s.node_id, s.action, s.ok) for s in found] == [
        (1, "0.1", "type [12] [vegan chocolate brownie] [1]", True),
        (2, "0.2.1", "click [31]", False),
        (3, "0.2.2", "click [32]", False),
    ]
    assert found[0].summary.startswith("page after type")


def test_offline_diagnosis_of_a_failed_action_is_a_navigation_error_citing_the_failed_steps() -> None:
    state, log = _failed_brownie()
    diagnosis = offline_diagnosis(state, log)

    assert diagnosis.failure_category is FailureCategory.NAVIGATION_ERROR
    assert diagnosis.confidence == 4  # the failure reached the root
    assert [(c.step_number, c.node_id) for c in diagnosis.critical_steps] == [(2, "0.2.1"), (3, "0.2.2")]
    assert "click [31]" in diagnosis.root_cause and "0 > 0.2 > 0.2.1" in diagnosis.root_cause
    assert "switched to the alternative 0.2.2" in diagnosis.what_should_have_been_done
    check_citations(diagnosis, trajectory(state, log))  # its own citations exist


def test_offline_diagnosis_says_what_the_repair_tried() -> None:
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK)
    diagnosis = offline_diagnosis(state, log)
    assert "repaired 0.2 (nothing added), 0 (changed the plan)" in diagnosis.what_should_have_been_done
    assert diagnosis.confidence == 3  # the run recovered: the failure never reached the root's outcome


def _script(**extra: Any) -> Script:
    data = json.loads((SCRIPTS / "brownie.json").read_text())
    return Script.model_validate({**data, **extra})


def test_offline_rules_for_a_failed_check_an_ungrounded_node_and_a_clean_run() -> None:
    state, log, _ = run_script(_script(incomplete=[BROWNIE_TASK] * 5), BROWNIE_TASK, EngineConfig(repair=False))
    assert offline_diagnosis(state, log).failure_category is FailureCategory.VERIFICATION_FAILURE

    nodes = dict(_script().nodes)
    nodes.pop("Note the recipe")
    state, log, _ = run_script(_script(nodes=nodes), BROWNIE_TASK, EngineConfig(repair=False))
    ungrounded = offline_diagnosis(state, log)
    assert ungrounded.failure_category is FailureCategory.WRONG_SEARCH_STRATEGY
    assert "0.3" in ungrounded.root_cause

    state, log, _ = run_script(_script(), BROWNIE_TASK)
    clean = offline_diagnosis(state, log)
    assert (clean.failure_category, clean.confidence, clean.critical_steps) == (FailureCategory.OTHER, 1, [])


# -- citations and retries -------------------------------------------------------------------------


def test_a_citation_of_a_missing_step_or_node_is_a_model_output_error() -> None:
    state, log = _failed_brownie()
    run = trajectory(state, log)
    check_citations(Diagnosis.model_validate(_good()), run)
    with pytest.raises(ModelOutputError, match="critical step 9 does not exist: the run has steps 1 to 3"):
        check_citations(Diagnosis.model_validate(_good(step=9)), run)
    with pytest.raises(ModelOutputError, match=r"names node 0\.7, which is not in the tree"):
        check_citations(Diagnosis.model_validate(_good(node="0.7")), run)


def test_diagnose_retries_a_bad_citation_then_fails_with_the_reason() -> None:
    state, log = _failed_brownie()
    answers = [_good(step=9), _good()]

    def ask(_: Any) -> Reply[Diagnosis]:
        return Reply(Diagnosis.model_validate(answers.pop(0)), CallRecord(usage={"input_tokens": 10}))

    accepted = diagnose(ask, trajectory(state, log), retries=2)
    assert (accepted.attempts, accepted.error, len(accepted.usage)) == (2, None, 2)
    assert accepted.diagnosis is not None and accepted.diagnosis.critical_steps[0].step_number == 2

    def always_bad(_: Any) -> Reply[Diagnosis]:
        return Reply(Diagnosis.model_validate(_good(step=9)), CallRecord())

    failed = diagnose(always_bad, trajectory(state, log), retries=1)
    assert failed.diagnosis is None and failed.attempts == 2
    assert (
        failed.error == "no usable diagnosis after 2 attempts: critical step 9 does not exist: the run has steps 1 to 3"
    )


# -- Claude, against the fake Messages API ---------------------------------------------------------


@pytest.fixture
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-diagnosis")


@pytest.fixture
def server(fake_key: None) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def test_the_diagnosis_prompt_shows_the_tree_with_statuses_before_the_steps(server: FakeAnthropic) -> None:
    state, log = _failed_brownie()
    server.replies[(TOOL, BROWNIE_TASK)] = _good()
    reply = ClaudeModel(base_url=server.url).diagnose(trajectory(state, log))

    assert reply.output.failure_category is FailureCategory.NAVIGATION_ERROR
    body = server.requests[-1]
    text = body["messages"][0]["content"][0]["text"]
    assert text.index("## Tree") < text.index("## Steps")
    assert "0.2.1 [ACTION PRUNED] Open recipe A (4.8 stars) (score 0.9) -> click [31]" in text
    assert "2. at 0.2.1: click [31] -> FAILED" in text
    assert [t["name"] for t in body["tools"]] == [TOOL]
    assert reply.call.usage["input_tokens"] > 0


def test_a_claude_diagnosis_citing_a_missing_step_is_retried_and_stored(server: FakeAnthropic, tmp_path: Path) -> None:
    store, session_id = _finished_session(tmp_path)
    server.replies[(TOOL, BROWNIE_TASK)] = [_good(step=9), _good()]

    stored = diagnose_session(store, session_id, "claude", base_url=server.url)

    assert stored.attempts == 2 and stored.error is None and len(server.requests) == 2
    assert stored.diagnosis is not None and stored.diagnosis.critical_steps[0].node_id == "0.2.1"
    state = replay(store.load(session_id))
    assert state.diagnosis == stored and state.status is RunStatus.FAILED
    assert store.session(session_id).status == "failed"


def test_a_claude_diagnosis_that_stays_malformed_is_stored_as_failed_with_the_reason(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    store, session_id = _finished_session(tmp_path)
    server.replies[(TOOL, BROWNIE_TASK)] = {**_good(), "confidence": 9}

    stored = diagnose_session(store, session_id, "claude", retries=1, base_url=server.url)

    assert stored.diagnosis is None and stored.attempts == 2
    assert "confidence" in (stored.error or "")
    assert "Step 2" not in markdown_report(session_id, replay(store.load(session_id)), store.load(session_id))
    assert "The diagnosis failed" in markdown_report(session_id, replay(store.load(session_id)), store.load(session_id))


# -- storing it with the session -------------------------------------------------------------------


def _finished_session(tmp_path: Path) -> tuple[SqlStore, str]:
    store = SqlStore(database_url(tmp_path / "sessions.db"))
    config = EngineConfig(repair=False, constraints=False)
    session_id = create_session(store, BROWNIE_TASK, f"script:{SCRIPTS / 'brownie_fail.json'}", config=config)
    deadline = time.monotonic() + 60
    state = Runner(store, session_id).run(should_stop=lambda: time.monotonic() > deadline)
    assert state.finished, f"waited for the scripted session to finish: {state.status} {state.reason}"
    return store, session_id


def test_the_offline_diagnosis_is_appended_to_a_finished_session_and_printed(tmp_path: Path) -> None:
    store, session_id = _finished_session(tmp_path)
    before = store.session(session_id)

    line, code = diagnose_command(store, session_id, "demo")

    assert code == 0
    printed = json.loads(line)
    assert printed["diagnosis"]["failure_category"] == "navigation_error"
    events = store.load(session_id)
    assert events[-1].kind is Kind.DIAGNOSED and events[-1].seq == before.last_seq + 1
    after = store.session(session_id)
    assert (after.status, after.reason, after.steps) == (before.status, before.reason, before.steps)
    report = markdown_report(session_id, replay(events), events)
    assert "## Diagnosis" in report and "navigation_error" in report


def test_a_session_that_has_not_finished_is_not_diagnosed(tmp_path: Path) -> None:
    store = SqlStore(database_url(tmp_path / "sessions.db"))
    session_id = create_session(store, BROWNIE_TASK, "demo", paused=True)
    with pytest.raises(SessionInputError, match="has not finished"):
        diagnose_session(store, session_id)
    assert all(e.kind is not Kind.DIAGNOSED for e in store.load(session_id))


def test_a_diagnosis_event_round_trips_through_its_json_form() -> None:
    state, log = _failed_brownie()
    from planner.events import Diagnosed

    payload = Diagnosed(model="demo", diagnosis=offline_diagnosis(state, log))
    event = Event(99, Kind.DIAGNOSED, None, payload)
    again = Event.from_data(99, "diagnosed", None, event.data, 1)
    assert again.payload == payload
    with pytest.raises(ValueError):
        CriticalStep(step_number=0, what_happened="x", what_went_wrong="y")
    assert "## Steps" in render_diagnosis(trajectory(state, log))
