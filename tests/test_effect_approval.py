"""The effect fence through the engine and the commands, on the dry environment: a request an action's
page sends that could change state is held for an operator, whatever the action is called; approved,
exactly that request goes through once; rejected, the node says so; "always allow" becomes a session rule.
"""

from __future__ import annotations

from conftest import new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Approve, Reject, apply_command
from planner.config import EngineConfig
from planner.effects import RequestRule
from planner.engine import Engine
from planner.events import Kind
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, replay
from planner.tree import Status

TASK = "Continue to the next page"
ORDER = "POST http://shop.test/order"
SCRIPT = Script.model_validate(
    {
        "nodes": {
            TASK: {"type": "AND", "children": [{"description": "continue"}]},
            "continue": {"type": "ACTION", "action": "click [4]"},
        }
    }
)


def _held(config: EngineConfig | None = None) -> tuple[Engine, DryEnvironment, list]:
    """A run whose innocently named "Continue" (click [4]) makes its page post an order."""
    state, log = new_state(TASK, config)
    env = DryEnvironment(sends={"click [4]": ORDER})
    engine = Engine(state, ScriptedModel(SCRIPT), env, guard=lambda action, target: None)
    while events := engine.step():
        log += events
    return engine, env, log


def _run_on(engine: Engine, log: list) -> None:
    while events := engine.step():
        log += events


def test_a_request_the_name_rule_missed_is_held_for_an_operator() -> None:
    engine, env, log = _held()
    state = engine.state
    assert env.arrived == [], "the order never reached the shop"
    assert state.status is RunStatus.AWAITING_APPROVAL
    approval = state.approval
    assert approval is not None and approval.action == "click [4]"
    assert [r.key for r in approval.requests] == [ORDER]
    assert approval.rule == "the page sent POST /order on shop.test, which could change state on the server"
    assert not any(e.kind is Kind.ACTION_EXECUTED for e in log), "a held action is not recorded as run"
    assert replay(log).approval == approval


def test_approved_the_request_goes_through_exactly_once() -> None:
    engine, env, log = _held()
    log += apply_command(engine.state, Approve())
    _run_on(engine, log)
    assert env.arrived == [ORDER]
    assert env.executed == ["click [4]", "click [4]"], "the action ran again, with the request allowed"
    assert engine.state.tree["0.1"].status is Status.SUCCESS
    granted = next(e for e in log if e.kind is Kind.APPROVAL_GRANTED)
    assert granted.data["requests"] == [ORDER]
    assert replay(log).approved_requests is None, "spent once the action ran"


def test_the_approval_lets_through_only_the_request_it_named() -> None:
    """Approving "POST /order" is no blank cheque: the same action sending something else is held again."""
    engine, env, log = _held()
    log += apply_command(engine.state, Approve())
    env.sends["click [4]"] = "POST http://shop.test/transfer"
    _run_on(engine, log)
    state = engine.state
    assert env.arrived == []
    assert state.status is RunStatus.AWAITING_APPROVAL
    assert state.approval is not None and [r.key for r in state.approval.requests] == ["POST http://shop.test/transfer"]


def test_rejected_the_node_fails_with_what_was_held() -> None:
    engine, env, log = _held()
    log += apply_command(engine.state, Reject(reason="no orders today", pause=True))
    node = engine.state.tree["0.1"]
    assert node.status is Status.FAIL
    assert node.reason == "POST /order on shop.test held and rejected by the operator: no orders today"
    assert env.arrived == []


def test_always_allow_adds_a_session_rule_and_later_requests_pass_unasked() -> None:
    engine, env, log = _held()
    log += apply_command(engine.state, Approve(always=True))
    assert engine.state.config.request_rules == (RequestRule.parse("allow POST shop.test/order"),)
    _run_on(engine, log)
    assert env.arrived == [ORDER]
    assert replay(log).config.request_rules == engine.state.config.request_rules, "stored with the session"
    assert env.execute("click [4]", rules=engine.state.config.request_rules).ok, "the next one passes unasked"
    assert env.arrived == [ORDER, ORDER]


def test_always_allow_is_refused_for_an_action_held_by_its_name() -> None:
    state, _ = new_state(TASK)
    engine = Engine(state, ScriptedModel(SCRIPT), DryEnvironment(), guard=lambda action, target: "named 'Buy'")
    while engine.step():
        pass
    assert state.status is RunStatus.AWAITING_APPROVAL
    events = apply_command(state, Approve(always=True))
    assert [e.kind for e in events] == [Kind.COMMAND_REJECTED]
    assert "only a held request can be allowed from now on" in events[0].data["reason"]
    assert state.status is RunStatus.AWAITING_APPROVAL and state.config.request_rules == ()


def test_the_sessions_rules_decide_before_anyone_is_asked() -> None:
    allow = EngineConfig(request_rules=(RequestRule.parse("allow POST shop.test/order"),))
    engine, env, _ = _held(allow)
    assert env.arrived == [ORDER] and engine.state.status is RunStatus.SUCCEEDED
    block = EngineConfig(request_rules=(RequestRule.parse("block POST */order"),))
    engine, env, _ = _held(block)
    assert env.arrived == []
    assert engine.state.status is not RunStatus.AWAITING_APPROVAL, "a blocked request is never asked about"


def test_without_approvals_the_fence_still_refuses_and_says_so() -> None:
    state, log = new_state(TASK, EngineConfig(guard=False))
    env = DryEnvironment(sends={"click [4]": ORDER})
    engine = Engine(state, ScriptedModel(SCRIPT), env, guard=None)
    _run_on(engine, log)
    assert env.arrived == []
    executed = next(e for e in log if e.kind is Kind.ACTION_EXECUTED)
    assert (
        executed.data["error"] == "refused: the page sent POST /order on shop.test, and this session asks no approvals"
    )
