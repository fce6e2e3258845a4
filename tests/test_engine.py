"""Engine semantics beyond the worked example: budgets, ablations, retries, updates, breakpoints."""

from __future__ import annotations

from typing import Any

from conftest import frames, new_state, run_script

from planner.browser.dry import DryEnvironment
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.errors import ModelEnvelopeError, ModelOutputError, ModelUnavailable
from planner.events import Kind
from planner.models.scripted import Script, ScriptedModel
from planner.questions import CallRecord, Observation, Reply
from planner.state import RunStatus
from planner.tree import NodeType, Status

TASK = "Buy nothing, just look"


def script(**parts: Any) -> Script:
    return Script.model_validate(parts)


def test_missing_description_fails_expansion_with_reason_after_retries() -> None:
    s = script(
        nodes={
            TASK: {"type": "AND", "children": ["known step", "unknown step"]},
            "known step": {"type": "ACTION", "action": "click [1]"},
        }
    )
    state, log, _ = run_script(s, TASK, EngineConfig(expansion_retries=2, repair=False))
    attempts = [e for e in log if e.kind is Kind.MODEL_CALL and e.node_id == "0.2"]
    assert [a.data["attempt"] for a in attempts] == [1, 2, 3]
    assert all(not a.data["ok"] and "no expansion for 'unknown step'" in a.data["error"] for a in attempts)
    assert state.tree["0.2"].status is Status.PRUNED
    assert "expansion failed: the script has no expansion for 'unknown step'" in (state.tree["0.2"].reason or "")
    assert state.status is RunStatus.FAILED


def test_invalid_model_output_is_retried_then_accepted() -> None:
    calls = {"n": 0}
    base = ScriptedModel(script(nodes={TASK: {"type": "ACTION", "action": "click [1]"}}))

    class Flaky(ScriptedModel):
        def expand(self, view):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 1:
                raise ModelOutputError("reply was not JSON")
            return base.expand(view)

    state, _ = new_state(TASK)
    engine = Engine(state, Flaky(base.script), DryEnvironment())
    while engine.step():
        pass
    assert calls["n"] == 2
    assert state.metrics.model_errors == 1
    assert state.status is RunStatus.SUCCEEDED


def test_or_expansion_without_scores_is_invalid() -> None:
    s = script(nodes={TASK: {"type": "OR", "children": ["a", "b"]}})
    state, log, _ = run_script(s, TASK, EngineConfig(repair=False))
    errors = [e.data["error"] for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]]
    assert errors and all("score" in error for error in errors)
    assert state.status is RunStatus.FAILED


def test_no_or_ablation_keeps_only_the_best_alternative() -> None:
    s = script(
        nodes={
            TASK: {
                "type": "OR",
                "children": [{"description": "weak", "score": 0.2}, {"description": "strong", "score": 0.8}],
            },
            "strong": {"type": "ACTION", "action": "click [2]"},
        }
    )
    state, _log, _ = run_script(s, TASK, EngineConfig(or_alternatives=False))
    root = state.tree["0"]
    assert root.type is NodeType.AND
    assert [state.tree[c].description for c in root.children] == ["strong"]
    assert state.status is RunStatus.SUCCEEDED


def test_repair_budget_is_respected() -> None:
    s = script(
        nodes={TASK: {"type": "AND", "children": ["try"]}, "try": {"type": "ACTION", "action": "click [9]"}},
        fail_actions=["click [9]"],
        repairs={TASK: {"add": ["try"]}},
    )
    state, log, _ = run_script(s, TASK, EngineConfig(max_revisions=3))
    assert state.tree["0"].revisions == 3
    assert sum(1 for e in log if e.kind is Kind.NODES_ADDED) == 3
    assert state.status is RunStatus.FAILED


def test_step_budget_ends_the_session() -> None:
    s = script(
        nodes={
            TASK: {"type": "AND", "children": ["a", "b", "c"]},
            **{x: {"type": "ACTION", "action": f"click [{i}]"} for i, x in enumerate("abc")},
        }
    )
    state, _log, _ = run_script(s, TASK, EngineConfig(max_steps=3))
    assert state.status is RunStatus.FAILED
    assert state.reason == "step budget of 3 exhausted"
    assert state.steps == 4  # three working steps, then the finishing step


def test_completion_check_incomplete_triggers_repair() -> None:
    s = script(
        nodes={
            TASK: {"type": "AND", "children": ["a"]},
            "a": {"type": "ACTION", "action": "click [1]"},
            "b": {"type": "ACTION", "action": "note [b found]"},
        },
        incomplete=[TASK],
        repairs={TASK: {"add": ["b"]}},
    )
    state, log, _ = run_script(s, TASK)
    assert ("0", "EXITING", "check") in frames(log)
    assert state.tree["0"].revisions == 1
    assert state.notes == ["b found"]
    assert state.status is RunStatus.SUCCEEDED


def test_every_and_completion_check_is_configurable() -> None:
    s = script(
        nodes={
            TASK: {"type": "AND", "children": ["sub"]},
            "sub": {"type": "AND", "children": ["a"]},
            "a": {"type": "ACTION", "action": "click [1]"},
        },
    )
    _, log_root, _ = run_script(s, TASK)
    _, log_all, _ = run_script(s, TASK, EngineConfig(completion_check="every_and"))
    checks = lambda log: [e.node_id for e in log if e.kind is Kind.MODEL_CALL and e.data["question"] == "complete"]
    assert checks(log_root) == ["0"]
    assert checks(log_all) == ["0.1", "0"]


def test_global_update_prunes_and_rewrites_but_not_operator_nodes() -> None:
    from planner.commands import Inject, apply_command

    s = script(
        nodes={
            TASK: {"type": "AND", "children": ["look", "compare prices", "read reviews"]},
            "look": {"type": "ACTION", "action": "click [1]"},
            "read reviews carefully": {"type": "ACTION", "action": "click [3]"},
            "my step": {"type": "ACTION", "action": "click [4]"},
        },
        updates={
            "click [1]": {"prune": ["compare prices", "my step"], "rewrite": {"read reviews": "read reviews carefully"}}
        },
    )
    state, _ = new_state(TASK)
    engine = Engine(state, ScriptedModel(s), DryEnvironment())
    engine.step()  # expand root
    apply_command(state, Inject(parent="0", goals=["my step"]))
    log = []
    while events := engine.step():
        log.extend(events)
    tree = state.tree
    assert tree["0.2"].status is Status.PRUNED and tree["0.2"].reason == "pruned by global update"
    assert tree["0.3"].description == "read reviews carefully" and tree["0.3"].status is Status.SUCCESS
    assert tree["0.4"].status is Status.SUCCESS
    refused = [e for e in log if e.kind is Kind.UPDATE_REFUSED]
    assert [(e.node_id, e.data["reason"]) for e in refused] == [("0.4", "prune refused: made or edited by an operator")]
    assert state.status is RunStatus.SUCCEEDED


def test_global_update_with_unknown_ids_is_retried_then_skipped() -> None:
    class BadUpdate(ScriptedModel):
        def observe(self, view, action):  # type: ignore[no-untyped-def]
            return Reply(Observation(prune=["9.9"]))

    state, _ = new_state(TASK)
    engine = Engine(state, BadUpdate(script(nodes={TASK: {"type": "ACTION", "action": "click [1]"}})), DryEnvironment())
    log = []
    while events := engine.step():
        log.extend(events)
    bad = [e for e in log if e.kind is Kind.MODEL_CALL and e.data["question"] == "observe"]
    assert len(bad) == 3 and all("9.9" in e.data["error"] for e in bad)
    skipped = [e for e in log if e.kind is Kind.UPDATE_REFUSED]
    assert skipped and skipped[0].data["reason"].startswith("observation summary and tree update skipped")
    assert state.status is RunStatus.SUCCEEDED


def test_breakpoints_pause_and_resume_continues() -> None:
    from planner.commands import Resume, apply_command

    s = script(nodes={TASK: {"type": "AND", "children": ["a"]}, "a": {"type": "ACTION", "action": "click [1]"}})
    config = EngineConfig(breakpoints=frozenset({Breakpoint.AFTER_EXPANSION, Breakpoint.BEFORE_ACTION}))
    state, _ = new_state(TASK, config)
    engine = Engine(state, ScriptedModel(s), DryEnvironment())
    reasons = []
    for _ in range(30):
        engine.step()
        if state.finished:
            break
        if state.status is RunStatus.PAUSED:
            reasons.append(state.reason)
            apply_command(state, Resume())
    assert reasons == [
        "plan review: 0 expanded as AND",
        "plan review: 0.1 expanded as ACTION",
        "breakpoint: before 0.1 (click [1])",
    ]
    assert state.status is RunStatus.SUCCEEDED


def test_model_unavailable_pauses_the_session() -> None:
    class Down(ScriptedModel):
        def expand(self, view):  # type: ignore[no-untyped-def]
            raise ModelUnavailable("529 overloaded after 3 retries")

    state, _ = new_state(TASK)
    Engine(state, Down(script()), DryEnvironment()).step()
    assert state.status is RunStatus.PAUSED
    assert state.reason == "model unavailable: 529 overloaded after 3 retries"


def test_guard_asks_for_approval_before_risky_actions() -> None:
    from planner.commands import Approve, apply_command

    s = script(nodes={TASK: {"type": "ACTION", "action": "click [7]"}})
    state, _ = new_state(TASK)
    executed = DryEnvironment()
    engine = Engine(
        state,
        ScriptedModel(s),
        executed,
        guard=lambda action, target: "named 'Buy now'" if action == "click [7]" else None,
    )
    engine.step()
    engine.step()
    assert state.status is RunStatus.AWAITING_APPROVAL and executed.executed == []
    assert engine.step() == []  # nothing happens until an operator decides
    apply_command(state, Approve())
    while engine.step():
        pass
    assert executed.executed == ["click [7]"]
    assert state.status is RunStatus.SUCCEEDED


def test_an_expansion_with_more_sub_goals_than_allowed_is_retried_then_fails() -> None:
    steps = [f"step {i}" for i in range(13)]
    s = script(nodes={TASK: {"type": "AND", "children": steps}})
    state, log, _ = run_script(s, TASK, EngineConfig(max_children=12, expansion_retries=1, repair=False))
    errors = [e.data["error"] for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]]
    assert errors[:2] == ["the expansion proposed 13 sub-goals; at most 12 are allowed"] * 2
    assert state.tree["0"].reason == "expansion failed: the expansion proposed 13 sub-goals; at most 12 are allowed"
    assert state.tree["0"].children == [] and state.status is RunStatus.FAILED


def test_a_repair_with_more_sub_goals_than_allowed_is_refused() -> None:
    s = script(
        nodes={TASK: {"type": "AND", "children": ["try"]}, "try": {"type": "ACTION", "action": "click [9]"}},
        fail_actions=["click [9]"],
        repairs={TASK: {"add": ["a", "b", "c"]}},
    )
    state, log, _ = run_script(s, TASK, EngineConfig(max_children=2, expansion_retries=0))
    [refused] = [e for e in log if e.kind is Kind.REVISION_USED]
    assert refused.data == {"ok": False, "reason": "the repair proposed 3 sub-goals; at most 2 are allowed"}
    assert state.tree["0"].children == ["0.1"] and state.status is RunStatus.FAILED


def test_the_sub_goal_limit_is_validated() -> None:
    import pytest
    from pydantic import ValidationError

    assert EngineConfig().max_children == 30
    for bad in (0, 101):
        with pytest.raises(ValidationError):
            EngineConfig(max_children=bad)


class _BrokenEndpoint(ScriptedModel):
    """Answers like a proxy's error page for the first `broken` expansion calls."""

    def __init__(self, script: Script, broken: int) -> None:
        super().__init__(script)
        self.broken = broken
        self.calls = 0

    def expand(self, view):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls <= self.broken:
            raise ModelEnvelopeError(
                "the endpoint answered HTTP 200 with an HTML page", CallRecord(prompt="p", raw="<html>")
            )
        return super().expand(view)


def test_an_unusable_answer_from_the_endpoint_is_retried_and_recorded() -> None:
    model = _BrokenEndpoint(script(nodes={TASK: {"type": "ACTION", "action": "click [1]"}}), broken=2)
    state, log = new_state(TASK, EngineConfig(expansion_retries=2, constraints=False))
    engine = Engine(state, model, DryEnvironment())
    while events := engine.step():
        log.extend(events)
    failed = [e.data for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]]
    assert [(d["attempt"], d["error"], d["raw"]) for d in failed] == [
        (1, "the endpoint answered HTTP 200 with an HTML page", "<html>"),
        (2, "the endpoint answered HTTP 200 with an HTML page", "<html>"),
    ]
    assert state.status is RunStatus.SUCCEEDED and state.metrics.model_errors == 2


def test_an_endpoint_that_keeps_answering_garbage_pauses_the_session_and_resume_goes_on() -> None:
    from planner.commands import Resume, apply_command

    model = _BrokenEndpoint(script(nodes={TASK: {"type": "ACTION", "action": "click [1]"}}), broken=3)
    state, log = new_state(TASK, EngineConfig(expansion_retries=2, constraints=False))
    engine = Engine(state, model, DryEnvironment())
    while events := engine.step():
        log.extend(events)
    assert state.status is RunStatus.PAUSED and model.calls == 3
    assert state.reason == "model unavailable: the endpoint answered HTTP 200 with an HTML page"
    assert state.tree["0"].status is not Status.FAIL and state.tree["0"].type is NodeType.UNKNOWN
    assert sum(1 for e in log if e.kind is Kind.MODEL_CALL and not e.data["ok"]) == 3
    apply_command(state, Resume())
    while engine.step():
        pass
    assert state.status is RunStatus.SUCCEEDED and model.calls == 4


def test_an_unreachable_model_pauses_at_once_without_retries() -> None:
    calls = []

    class Down(ScriptedModel):
        def expand(self, view):  # type: ignore[no-untyped-def]
            calls.append(view.node.id)
            raise ModelUnavailable("cannot reach the Claude API")

    state, _ = new_state(TASK, EngineConfig(expansion_retries=2, constraints=False))
    Engine(state, Down(script()), DryEnvironment()).step()
    assert calls == ["0"] and state.status is RunStatus.PAUSED
