"""Task-constraint extraction, operators setting constraints, and the root's merged final answer."""

from __future__ import annotations

import pytest
from conftest import BROWNIE_TASK, drive, frames, load, new_state
from pydantic import ValidationError

from planner.browser.dry import DryEnvironment
from planner.commands import SetConstraints, apply_command, parse_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.errors import ModelOutputError
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from planner.questions import Constraints, ItemConstraints, Reply, View
from planner.state import RunStatus, SessionState

DEFAULTS = EngineConfig()


class Watching(ScriptedModel):
    """The brownie script, remembering the constraints every call was shown."""

    def __init__(self, script: Script, fail_extraction: bool = False) -> None:
        super().__init__(script)
        self.fail_extraction = fail_extraction
        self.seen: list[tuple[str, tuple[str, ...]]] = []

    def extract_constraints(self, view: View) -> Reply[Constraints]:
        if self.fail_extraction:
            raise ModelOutputError("no idea")
        return Reply(Constraints(items=[ItemConstraints(item="brownie recipe", constraints=["vegan", "rating 4+"])]))

    def expand(self, view: View):  # type: ignore[no-untyped-def]
        self.seen.append(("expand", view.constraints))
        return super().expand(view)


def _run(model: ScriptedModel, state: SessionState, log: list[Event]) -> None:
    drive(Engine(state, model, DryEnvironment(model.script.fail_actions)), log)


def test_constraints_are_extracted_first_and_shown_to_every_later_call() -> None:
    model = Watching(load("brownie.json"))
    state, log = new_state(BROWNIE_TASK, DEFAULTS)
    _run(model, state, log)
    assert frames(log)[0] == ("0", None, "constraints")
    assert state.constraints == ["brownie recipe: vegan", "brownie recipe: rating 4+"]
    assert model.seen and all(shown == tuple(state.constraints) for _, shown in model.seen)
    assert state.status is RunStatus.SUCCEEDED


def test_a_failed_extraction_is_recorded_and_the_run_goes_on() -> None:
    state, log = new_state(BROWNIE_TASK, EngineConfig(expansion_retries=1))
    _run(Watching(load("brownie.json"), fail_extraction=True), state, log)
    [event] = [e for e in log if e.kind is Kind.CONSTRAINTS_SET]
    assert event.payload.constraints == [] and event.payload.error == "extraction failed: no idea"
    assert state.constraints == [] and state.status is RunStatus.SUCCEEDED


def test_operator_constraints_set_before_the_start_replace_the_extraction() -> None:
    model = Watching(load("brownie.json"))
    state, log = new_state(BROWNIE_TASK, DEFAULTS)
    log += apply_command(state, SetConstraints(constraints=["  no dairy ", "", "4.5 stars or more"]))
    _run(model, state, log)
    assert state.constraints == ["no dairy", "4.5 stars or more"]
    assert not any(e.kind is Kind.MODEL_CALL and e.payload.question == "constraints" for e in log)
    assert model.seen[0][1] == ("no dairy", "4.5 stars or more")


def test_setting_the_same_constraints_is_rejected_and_oversized_ones_never_parse() -> None:
    state, _ = new_state(BROWNIE_TASK, DEFAULTS)
    apply_command(state, SetConstraints(constraints=["vegan"]))
    [rejected] = apply_command(state, SetConstraints(constraints=["vegan", " "]))
    assert rejected.kind is Kind.COMMAND_REJECTED and rejected.payload.reason == "those are the constraints already"
    with pytest.raises(ValidationError):
        parse_command({"kind": "constraints", "constraints": ["x" * 501]})


def test_the_roots_completion_check_carries_the_final_answer() -> None:
    state, log = new_state(BROWNIE_TASK)
    _run(ScriptedModel(load("brownie.json")), state, log)
    questions = [e.payload.question for e in log if e.kind is Kind.MODEL_CALL]
    assert "final_answer" not in questions and questions[-1] == "complete"
    assert state.final_answer == "Fudgy vegan brownies (4.8 stars)"


def test_a_failed_run_still_asks_for_a_final_answer() -> None:
    state, log = new_state(BROWNIE_TASK, EngineConfig(constraints=False, repair=False))
    _run(ScriptedModel(load("brownie_fail.json")), state, log)
    assert state.status is RunStatus.FAILED
    assert [e.payload.question for e in log if e.kind is Kind.MODEL_CALL][-1] == "final_answer"
