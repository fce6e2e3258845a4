"""Operator commands: each is applied or rejected with a reason, exactly once."""

from __future__ import annotations

import pytest
from conftest import BROWNIE_TASK, load, new_state
from pydantic import ValidationError

from planner.browser.dry import DryEnvironment
from planner.commands import (
    Approve,
    Edit,
    EditAction,
    Force,
    Inject,
    Pause,
    Prune,
    Reject,
    Reopen,
    Resume,
    Step,
    Stop,
    apply_command,
    parse_command,
)
from planner.engine import Engine, view_of
from planner.events import Cause, Event, Kind
from planner.models.prompts import render_user
from planner.models.scripted import NodeScript, Script, ScriptedModel
from planner.questions import Question
from planner.state import RunStatus, SessionState
from planner.tree import NodeType, Origin, Status


def started(script: Script, steps: int) -> tuple[SessionState, Engine]:
    state, _ = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    for _ in range(steps):
        engine.step()
    return state, engine


def finish(state: SessionState, engine: Engine) -> list[Event]:
    """Steps until the run stops; the events they recorded."""
    events: list[Event] = []
    for _ in range(200):
        if not (step := engine.step()):
            break
        events += step
    return events


def outcome(state: SessionState, command) -> tuple[str, str | None]:  # type: ignore[no-untyped-def]
    events = apply_command(state, command)
    last = events[-1]
    return last.kind.value, getattr(last.payload, "reason", None)


def test_pause_resume_step_stop(brownie: Script) -> None:
    state, engine = started(brownie, 1)
    assert outcome(state, Resume()) == ("command_rejected", "the session is already running")
    assert outcome(state, Pause())[0] == "command_applied"
    assert state.status is RunStatus.PAUSED and engine.step() == []
    assert outcome(state, Pause()) == ("command_rejected", "the session is already paused")
    assert outcome(state, Step())[0] == "command_applied"
    assert len([e for e in engine.step() if e.kind is Kind.STEP]) == 1
    assert state.status is RunStatus.PAUSED and state.reason == "paused after one step"
    assert outcome(state, Stop())[0] == "command_applied" and state.status is RunStatus.STOPPED
    assert outcome(state, Resume())[0] == "command_applied" and state.status is RunStatus.RUNNING


def test_steps_pressed_before_the_first_ran_add_up(brownie: Script) -> None:
    """Three Steps reaching one step boundary are three steps, then a pause: N presses are N steps."""
    state, engine = started(brownie, 1)
    apply_command(state, Pause())
    for _ in range(3):
        assert outcome(state, Step())[0] == "command_applied"
    assert (state.status, state.reason, state.single_steps) == (RunStatus.RUNNING, "3 steps", 3)
    for left in (2, 1):
        assert len([e for e in engine.step() if e.kind is Kind.STEP]) == 1
        assert (state.status, state.single_steps) == (RunStatus.RUNNING, left)
    assert len([e for e in engine.step() if e.kind is Kind.STEP]) == 1
    assert state.status is RunStatus.PAUSED and state.reason == "paused after one step"


def test_same_command_twice_applies_once(brownie: Script) -> None:
    state, _ = started(brownie, 1)
    command = Pause()
    assert len(apply_command(state, command)) == 2
    assert apply_command(state, command) == []


def test_inject_under_and_runs_at_position(brownie: Script) -> None:
    state, engine = started(brownie, 1)
    assert outcome(state, Inject(parent="0", goals=["Sort by rating"], position=1))[0] == "command_applied"
    node = state.tree["0.4"]
    assert state.tree["0"].children == ["0.1", "0.4", "0.2", "0.3"]
    assert node.origin is Origin.OPERATOR and node.protected
    engine.model.script.nodes["Sort by rating"] = engine.model.script.nodes[
        "Search for vegan chocolate brownie"
    ].model_copy(update={"action": "click [5]"})
    finish(state, engine)
    assert node.status is Status.SUCCESS
    assert state.status is RunStatus.SUCCEEDED


def test_inject_under_unexpanded_node_needs_a_type(brownie: Script) -> None:
    state, _ = started(brownie, 1)
    assert outcome(state, Inject(parent="0.2", goals=["x"])) == (
        "command_rejected",
        "0.2 is not expanded yet: choose AND or OR for it, or let the planner plan the rest",
    )
    assert (
        outcome(state, Inject(parent="0.2", goals=["x", "y"], node_type="OR", scores=[0.5, 0.7]))[0]
        == "command_applied"
    )
    assert state.tree["0.2"].type is NodeType.OR
    assert [state.tree[c].score for c in state.tree["0.2"].children] == [0.5, 0.7]


def _leaf(action: str) -> NodeScript:
    return NodeScript(type="ACTION", action=action)


def test_inject_that_leaves_the_rest_to_the_planner_keeps_the_models_plan(brownie: Script) -> None:
    """Issue 27: an inject under a node the planner had not expanded replaced its plan with the
    operator's line; with `plan_rest` the node is still expanded, and the model's steps run too."""
    brownie.nodes["Check it is vegan"] = _leaf("note [vegan: yes]")
    state, engine = started(brownie, 1)
    assert outcome(state, Inject(parent="0.3", goals=["Check it is vegan"], plan_rest=True))[0] == "command_applied"
    assert state.tree["0.3"].type is NodeType.UNKNOWN
    finish(state, engine)
    node = state.tree["0.3"]
    kids = state.tree.children(node)
    assert node.type is NodeType.AND and node.status is Status.SUCCESS
    assert [(k.description, k.origin, k.status) for k in kids] == [
        ("Check it is vegan", Origin.OPERATOR, Status.SUCCESS),
        ("Note the recipe", Origin.PLANNER, Status.SUCCESS),
    ]
    assert state.notes[-2:] == ["vegan: yes", "Fudgy vegan brownies, 4.8 stars"]
    assert state.status is RunStatus.SUCCEEDED


def test_the_planner_plans_around_the_operators_steps_in_their_order(brownie: Script) -> None:
    brownie.nodes["Note the recipe"] = NodeScript(
        type="AND", children=["Scroll to the ingredients", "check  IT is vegan", "Note the name"]
    )
    for goal, action in [("Scroll to the ingredients", "scroll [down]"), ("Check it is vegan", "note [vegan]")]:
        brownie.nodes[goal] = _leaf(action)
    brownie.nodes["Check the price"] = _leaf("note [price]")
    brownie.nodes["Note the name"] = _leaf("note [name]")
    state, engine = started(brownie, 1)
    goals = ["Check it is vegan", "Check the price"]
    assert outcome(state, Inject(parent="0.3", goals=goals, plan_rest=True))[0] == "command_applied"
    events = finish(state, engine)
    kids = state.tree.children(state.tree["0.3"])
    assert [(k.description, k.origin) for k in kids] == [
        ("Scroll to the ingredients", Origin.PLANNER),
        ("Check it is vegan", Origin.OPERATOR),
        ("Check the price", Origin.OPERATOR),
        ("Note the name", Origin.PLANNER),
    ]
    assert all(k.status is Status.SUCCESS for k in kids)
    expanded = [e for e in events if e.kind is Kind.NODE_EXPANDED and e.node_id == "0.3"]
    assert expanded[0].payload.note == "kept the operator's 2 steps; the planner added 2 steps, 1 before them"


def test_alternatives_for_a_node_with_the_operators_steps_become_one_step_after_them(brownie: Script) -> None:
    brownie.nodes["Check it is vegan"] = _leaf("note [vegan]")
    state, engine = started(brownie, 1)
    assert outcome(state, Inject(parent="0.2", goals=["Check it is vegan"], plan_rest=True))[0] == "command_applied"
    finish(state, engine)
    kids = state.tree.children(state.tree["0.2"])
    assert state.tree["0.2"].type is NodeType.AND
    assert [(k.description, k.origin, k.score) for k in kids] == [
        ("Check it is vegan", Origin.OPERATOR, None),
        ("Open recipe A (4.8 stars)", Origin.PLANNER, None),
    ]


def test_a_task_given_first_steps_and_planned_as_one_action_runs_both() -> None:
    """The root, given steps before its first expansion, answered with one action: that action is its
    step after the operator's, not refused as a re-planned task's single action."""
    script = Script(nodes={BROWNIE_TASK: _leaf("click [5]"), "Check it is vegan": _leaf("note [vegan]")})
    state, engine = started(script, 0)
    assert outcome(state, Inject(parent="0", goals=["Check it is vegan"], plan_rest=True))[0] == "command_applied"
    finish(state, engine)
    kids = state.tree.children(state.tree["0"])
    assert [(k.description, k.origin, k.status) for k in kids] == [
        ("Check it is vegan", Origin.OPERATOR, Status.SUCCESS),
        (BROWNIE_TASK, Origin.PLANNER, Status.SUCCESS),
    ]


def test_the_expansion_prompt_shows_the_operators_steps(brownie: Script) -> None:
    state, engine = started(brownie, 1)
    apply_command(state, Inject(parent="0.3", goals=["Check it is vegan"], plan_rest=True))
    prompt = render_user(Question.EXPAND, view_of(state, state.tree["0.3"], engine.config))
    assert "## The operator's steps for this node\n- Check it is vegan\nThey are kept" in prompt
    assert "## The operator's steps" not in render_user(
        Question.EXPAND, view_of(state, state.tree["0.2"], engine.config)
    )


def test_leaving_the_rest_to_the_planner_is_refused_where_it_cannot_plan(brownie: Script) -> None:
    state, _ = started(brownie, 1)
    assert outcome(state, Inject(parent="0", goals=["x"], plan_rest=True)) == (
        "command_rejected",
        "0 is already planned; the planner plans the rest only of a node not expanded yet",
    )
    assert outcome(state, Inject(parent="0.3", goals=["x"], plan_rest=True, node_type="OR")) == (
        "command_rejected",
        "the planner plans around the operator's steps in order (AND), not as OR alternatives",
    )


def test_inject_rejections_explain_themselves(brownie: Script) -> None:
    state, _ = started(brownie, 3)
    cases = [
        (Inject(parent="0.9", goals=["x"]), "there is no node '0.9' in this session"),
        (Inject(parent="0.1", goals=["x"]), "0.1 is an action; inject under its parent, or edit it with re-expand"),
        (Inject(parent="0", goals=["x"], position=9), "position 9 is past the end; 0 has 3 children"),
        (Inject(parent="0", goals=["x"], node_type="OR"), "0 is already an AND node"),
        (Inject(parent="0", goals=["x"], scores=[0.5]), "scores are only for OR alternatives"),
    ]
    for command, reason in cases:
        assert outcome(state, command) == ("command_rejected", reason)


def test_inject_under_success_node_reopens_it_and_ancestors(brownie: Script) -> None:
    state, _ = started(brownie, 7)  # 0.2 has succeeded through 0.2.1
    assert state.tree["0.2"].status is Status.SUCCESS
    assert outcome(state, Inject(parent="0.2", goals=["x"], scores=[0.5]))[1] == (
        "0.2 already succeeded through 0.2.1; another alternative would never run"
    )


def test_inject_under_a_finished_and_reopens_it_and_runs_the_new_step() -> None:
    script = Script.model_validate(
        {
            "nodes": {
                BROWNIE_TASK: {"type": "AND", "children": ["group", "last"]},
                "group": {"type": "AND", "children": ["a"]},
                "a": {"type": "ACTION", "action": "click [1]"},
                "b": {"type": "ACTION", "action": "click [2]"},
                "last": {"type": "ACTION", "action": "click [3]"},
            }
        }
    )
    state, engine = started(script, 5)  # group (0.1) has succeeded
    assert state.tree["0.1"].status is Status.SUCCESS
    assert outcome(state, Inject(parent="0.1", goals=["b"]))[0] == "command_applied"
    assert state.tree["0.1"].status is Status.VISITED
    finish(state, engine)
    assert engine.env.executed == ["click [1]", "click [2]", "click [3]"]
    assert state.tree["0.1"].status is Status.SUCCESS and state.status is RunStatus.SUCCEEDED


def test_a_node_waiting_to_be_expanded_again_keeps_its_old_children_closed() -> None:
    script = Script.model_validate(
        {
            "nodes": {
                BROWNIE_TASK: {"type": "AND", "children": ["outer", "last"]},
                "outer": {"type": "AND", "children": ["group", "other"]},
                "group": {"type": "AND", "children": ["a", "skip"]},
                "a": {"type": "ACTION", "action": "click [1]"},
                "skip": {"type": "ACTION", "action": "click [4]"},
                "other": {"type": "ACTION", "action": "click [2]"},
                "last": {"type": "ACTION", "action": "click [3]"},
            }
        }
    )
    state, engine = started(script, 3)  # group (0.1.1) is expanded
    assert outcome(state, Prune(node="0.1.1.2", reason="not needed"))[0] == "command_applied"
    for _ in range(3):
        engine.step()  # group succeeds without the pruned step; outer (0.1) is still open
    assert state.tree["0.1.1"].status is Status.SUCCESS and state.tree["0.1"].status is Status.VISITED
    assert outcome(state, Edit(node="0.1", description="outer", reexpand=True))[0] == "command_applied"
    assert state.tree["0.1"].type is NodeType.UNKNOWN
    waiting = "0.1 is waiting to be expanded again; its old children are history"
    assert outcome(state, Inject(parent="0.1.1", goals=["b"])) == ("command_rejected", waiting)
    assert outcome(state, Reopen(node="0.1.1.2")) == ("command_rejected", waiting)
    assert state.tree["0.1.1"].status is Status.SUCCESS
    assert outcome(state, Reopen(node="0.1.2")) == ("command_rejected", waiting)  # superseded by the re-expansion


def test_prune_keeps_later_siblings_unlike_failure(brownie: Script) -> None:
    state, engine = started(brownie, 3)
    assert outcome(state, Prune(node="0.2", reason="not needed"))[0] == "command_applied"
    assert state.tree["0.2"].status is Status.PRUNED
    assert state.tree["0.2"].reason == "operator: not needed"
    assert state.tree["0.3"].status is Status.UNVISITED
    finish(state, engine)
    assert state.tree["0.3"].status is Status.SUCCESS
    assert "0.2.1" not in state.tree  # pruned before it was expanded
    assert outcome(state, Prune(node="0.3", reason="x"))[1] == "the session has ended (succeeded); fork it to continue"


def test_prune_rejections(brownie: Script) -> None:
    state, _ = started(brownie, 3)
    assert outcome(state, Prune(node="0", reason="x"))[1] == "the root cannot be pruned; stop the session instead"
    outcome(state, Prune(node="0.3", reason="x"))
    assert outcome(state, Prune(node="0.3", reason="x"))[1] == "0.3 is already PRUNED"
    with pytest.raises(ValidationError):
        Prune(node="0.3", reason="")


def test_edit_and_reexpand(brownie: Script) -> None:
    state, engine = started(brownie, 4)  # 0.2 expanded as OR
    assert (
        outcome(state, Edit(node="0.2", description="Open recipe B (4.5 stars)", reexpand=True))[0] == "command_applied"
    )
    node = state.tree["0.2"]
    assert node.type is NodeType.ACTION or node.type is NodeType.UNKNOWN
    assert state.tree["0.2.1"].status is Status.PRUNED and state.tree["0.2.2"].status is Status.PRUNED
    assert node.protected
    finish(state, engine)
    assert node.type is NodeType.ACTION and node.action == "click [32]"
    assert outcome(state, Edit(node="0.2", description="x"))[0] == "command_rejected"


def test_reopen_and_force(brownie: Script) -> None:
    state, engine = started(brownie, 4)
    assert outcome(state, Force(node="0.2", child="0.2.2"))[0] == "command_applied"
    assert (
        outcome(state, Force(node="0.1", child="0.2.2"))[1]
        == "0.1 is not an OR node; only OR alternatives can be forced"
    )
    assert outcome(state, Reopen(node="0.1"))[1] == "only FAIL, PRUNED or DELETED nodes can be reopened; 0.1 is SUCCESS"
    finish(state, engine)
    assert state.tree["0.2.2"].status is Status.SUCCESS
    assert state.tree["0.2.1"].status is Status.UNVISITED


def test_reopen_a_deleted_sibling_runs_it_again() -> None:
    script = load("brownie_fail.json")
    state, engine = started(script, 12)  # 0.2 pruned, 0.3 deleted, root failed
    assert state.tree["0.3"].status is Status.DELETED
    assert outcome(state, Reopen(node="0.3"))[0] == "command_applied"
    assert state.tree["0"].status is Status.VISITED and state.tree["0.3"].status is Status.UNVISITED
    finish(state, engine)
    assert state.tree["0.3"].status is Status.SUCCESS
    assert state.tree["0"].revisions == 0
    assert state.status is RunStatus.SUCCEEDED


def test_approval_commands_need_a_pending_action(brownie: Script) -> None:
    state, _ = started(brownie, 1)
    assert outcome(state, Approve())[1] == "no action is waiting for approval"
    assert outcome(state, Reject())[1] == "no action is waiting for approval"
    assert (
        outcome(state, EditAction(action="click [1]"))[1]
        == "no action is waiting for approval; name the action node to edit"
    )


def test_reject_fails_the_guarded_action() -> None:
    script = Script.model_validate(
        {
            "nodes": {
                BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
                "buy": {"type": "ACTION", "action": "click [9]"},
            }
        }
    )
    state, _ = new_state(BROWNIE_TASK)
    env = DryEnvironment()
    engine = Engine(state, ScriptedModel(script), env, guard=lambda action, target: "buy button")
    for _ in range(3):
        engine.step()
    assert state.status is RunStatus.AWAITING_APPROVAL
    assert outcome(state, Pause())[1] == "an action is waiting for approval: approve, edit or reject it first"
    assert outcome(state, Reject(reason="no purchases"))[0] == "command_applied"
    assert state.tree["0.1"].status is Status.FAIL
    assert state.tree["0.1"].reason == "rejected by operator: no purchases"
    finish(state, engine)
    assert env.executed == []
    assert (state.status, state.cause) == (RunStatus.PAUSED, Cause.NO_ALTERNATIVE), "a rejection never ends a run"
    assert state.reason and state.reason.startswith("nothing is left to try after the rejected action")
    assert outcome(state, Resume())[0] == "command_applied"
    finish(state, engine)
    assert state.status is RunStatus.FAILED, "resumed with the plan unchanged, the run ends failed"


def _guarded_buy(nodes: dict[str, object], fail: tuple[str, ...] = ()) -> tuple[SessionState, Engine, DryEnvironment]:
    """A session whose `click [9]` waits for approval, run until it does."""
    state, _ = new_state(BROWNIE_TASK)
    script = Script.model_validate({"nodes": nodes, "fail_actions": list(fail)})
    env = DryEnvironment(script.fail_actions)
    engine = Engine(state, ScriptedModel(script), env, guard=lambda action, _: "buy" if action == "click [9]" else None)
    finish(state, engine)
    assert state.status is RunStatus.AWAITING_APPROVAL
    return state, engine, env


def test_after_a_rejection_with_nothing_left_an_injected_step_carries_the_run_on() -> None:
    nodes = {
        BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
        "buy": {"type": "ACTION", "action": "click [9]"},
        "look": {"type": "ACTION", "action": "click [4]"},
    }
    state, engine, env = _guarded_buy(nodes)
    outcome(state, Reject())
    finish(state, engine)
    assert state.cause is Cause.NO_ALTERNATIVE
    assert outcome(state, Inject(parent="0", goals=["look"]))[0] == "command_applied"
    assert outcome(state, Resume())[0] == "command_applied"
    finish(state, engine)
    assert env.executed == ["click [4]"] and state.tree["0.2"].status is Status.SUCCESS


def test_a_failure_after_the_run_went_on_past_a_rejection_ends_the_run() -> None:
    """The rejection opened another way (an OR's next alternative), which ran; a later, unrelated
    failure with nothing left ends the run as any failure does."""
    nodes = {
        BROWNIE_TASK: {"type": "AND", "children": ["pick", "pay"]},
        "pick": {
            "type": "OR",
            "children": [{"description": "buy", "score": 0.9}, {"description": "look", "score": 0.5}],
        },
        "buy": {"type": "ACTION", "action": "click [9]"},
        "look": {"type": "ACTION", "action": "click [4]"},
        "pay": {"type": "ACTION", "action": "click [5]"},
    }
    state, engine, env = _guarded_buy(nodes, fail=("click [5]",))
    outcome(state, Reject())
    finish(state, engine)
    assert env.executed == ["click [4]", "click [5]"]
    assert state.status is RunStatus.FAILED, (state.status, state.reason)


def test_reject_and_pause_leaves_the_failed_action_for_the_operator() -> None:
    script = Script.model_validate(
        {
            "nodes": {
                BROWNIE_TASK: {"type": "AND", "children": ["buy"]},
                "buy": {"type": "ACTION", "action": "click [9]"},
            }
        }
    )
    state, _ = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(), guard=lambda action, target: "buy button")
    for _ in range(3):
        engine.step()
    assert outcome(state, Reject(reason="wrong item", pause=True))[0] == "command_applied"
    assert (state.status, state.tree["0.1"].status) == (RunStatus.PAUSED, Status.FAIL)
    assert engine.step() == []  # nothing moves until the operator resumes
    assert outcome(state, Reopen(node="0.1"))[0] == "command_applied"


def test_edit_action_approves_the_new_text() -> None:
    script = Script.model_validate({"nodes": {BROWNIE_TASK: {"type": "ACTION", "action": "click [9]"}}})
    state, _ = new_state(BROWNIE_TASK)
    env = DryEnvironment()
    engine = Engine(
        state, ScriptedModel(script), env, guard=lambda action, target: "risky" if action == "click [9]" else None
    )
    engine.step()
    engine.step()
    assert outcome(state, EditAction(action="click [10]"))[0] == "command_applied"
    finish(state, engine)
    assert env.executed == ["click [10]"]


def test_an_edited_action_the_page_cannot_run_is_refused_and_the_approval_still_waits() -> None:
    script = Script.model_validate({"nodes": {BROWNIE_TASK: {"type": "ACTION", "action": "click [9]"}}})
    state, _ = new_state(BROWNIE_TASK)
    env = DryEnvironment()
    engine = Engine(state, ScriptedModel(script), env, guard=lambda action, target: "risky")
    engine.step()
    engine.step()
    assert state.status is RunStatus.AWAITING_APPROVAL

    def page(action: str) -> str | None:
        return "there is no element [9999] on this page" if "9999" in action else None

    events = apply_command(state, EditAction(action="click [9999]"), page)
    assert (events[-1].kind, events[-1].payload.reason) == (
        Kind.COMMAND_REJECTED,
        "click [9999] cannot run on this page: there is no element [9999] on this page",
    )
    assert state.status is RunStatus.AWAITING_APPROVAL and env.executed == []
    assert apply_command(state, EditAction(action="click [10]"), page)[-1].kind is Kind.COMMAND_APPLIED


def test_parse_command_validates_shape() -> None:
    assert isinstance(parse_command({"kind": "prune", "node": "0.1", "reason": "dup"}), Prune)
    with pytest.raises(ValidationError):
        parse_command({"kind": "inject", "parent": "0", "goals": ["  "]})
    with pytest.raises(ValidationError):
        parse_command({"kind": "explode"})


@pytest.mark.parametrize(
    ("payload", "sentence"),
    [
        (
            {"kind": "edit", "node": "0.1", "description": "   "},
            "invalid edit command: description: cannot be blank; write some text",
        ),
        (
            {"kind": "prune", "node": "0.1", "reason": "\t\n"},
            "invalid prune command: reason: cannot be blank; write some text",
        ),
        (
            {"kind": "edit_action", "action": " "},
            "invalid edit action command: action: cannot be blank; write some text",
        ),
        (
            {"kind": "inject", "parent": "0", "goals": ["ok", " "]},
            "invalid inject command: sub-goals #2: cannot be blank; write some text",
        ),
        (
            {"kind": "reject", "reason": "   "},
            "invalid reject command: reason: cannot be only spaces; leave it out or write a reason",
        ),
        (
            {"kind": "budget", "max_cost_usd": float("nan")},
            "invalid budget command: cost cap: must be a finite number",
        ),
        (
            {"kind": "prune", "node": "x" * 100_000, "reason": "r"},
            "invalid prune command: node: is too long: at most 200 characters",
        ),
        ({"kind": "pause", "extra": 1}, "invalid pause command: 'extra': is not an accepted field"),
        (
            {"kind": "inject", "parent": "0", "template": {"name": "t", "goals": [{"description": "x"}]}, "params": 1},
            "invalid inject command: template parameters: must be an object with named fields",
        ),
        (
            {"kind": "budget", "max_cost_usd": -1},
            "invalid budget command: cost cap: must be more than 0",
        ),
        ({"kind": "inject", "parent": "0", "goals": []}, "invalid inject command: sub-goals: cannot be empty"),
        (
            {"kind": "inject", "parent": "0", "goals": ["a"], "scores": [2.0]},
            "invalid inject command: scores #1: must be 1 or less",
        ),
        ({"kind": "prune", "node": "0.1"}, "invalid prune command: reason: is required"),
        (
            {"kind": "inject", "parent": "0", "goals": ["a"], "position": "x"},
            "invalid inject command: position: must be a whole number",
        ),
        (
            {"kind": "inject", "parent": "0", "goals": ["a"], "node_type": "XOR"},
            "invalid inject command: node type: must be one of 'AND' or 'OR'",
        ),
        (
            {"kind": "x" * 100_000},
            (
                "invalid command: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' is not a command kind; use one of pause, resume, "
                "step, stop, inject, prune, edit, reopen, force, undo, approve, reject, edit_action, breakpoints, "
                "breakpoint, constraints, budget, plan"
            ),
        ),
    ],
)
def test_an_invalid_command_is_one_sentence_without_its_input(payload: dict[str, object], sentence: str) -> None:
    from planner.commands import describe_command_error

    with pytest.raises(ValidationError) as refused:
        parse_command(payload)
    assert describe_command_error(refused.value) == sentence


_VALID: dict[str, dict[str, object]] = {
    "pause": {},
    "resume": {},
    "step": {},
    "stop": {},
    "inject": {"parent": "0", "goals": ["a"]},
    "prune": {"node": "0.1", "reason": "r"},
    "edit": {"node": "0.1", "description": "d"},
    "reopen": {"node": "0.1"},
    "force": {"node": "0", "child": "0.1"},
    "undo": {},
    "approve": {},
    "reject": {},
    "edit_action": {"action": "click [1]"},
    "breakpoints": {},
    "breakpoint": {"node": "0.1"},
    "constraints": {},
    "budget": {},
    "plan": {"node": "0", "children": ["0.1"]},
}
"""A valid command of each kind, for the bad values below to spoil one field at a time."""

_BAD: list[object] = [
    None,
    "",
    "   ",
    "\t\n",
    "x" * 100_000,
    "abc",
    "XOR",
    "0x10",
    0,
    -1,
    1.5,
    20_000,
    10**30,
    float("nan"),
    float("inf"),
    True,
    [],
    [""],
    ["  "],
    [None],
    [5],
    [1.5, "x"],
    ["g"] * 60,
    ["y" * 3000],
    [{"id": 5}],
    [{"id": None, "description": " "}],
    {},
    {"a b": "x"},
    {"a": "z" * 600},
    {"x": 1},
    {"name": "bad name", "goals": []},
    {"name": "t", "goals": [{"description": "x", "type": "AND"}]},
    {"name": "t", "params": ["p"], "goals": [{"description": "no placeholder"}]},
]
"""Values an operator, a form or a script could send for any field: wrong types, blanks, the huge,
the negative, the malformed."""

_PYDANTIC = (
    "List should have",
    "validation error",
    "Input should be",
    "after validation",
    "Value error",
    "Assertion failed",
    "Field required",
    "Extra inputs",
    "instance of",
    "[type=",
    "pydantic",
)
"""pydantic's own wording: it speaks of Python types and its own machinery, not of the operator's plan."""


def _refusals() -> list[tuple[dict[str, object], str]]:
    """Every command kind's fields spoiled one at a time with each bad value, each required field left
    out, an unknown field added: each refused payload with its sentence."""
    from planner.commands import COMMAND_MODELS, describe_command_error

    assert set(_VALID) == set(COMMAND_MODELS), "every command kind has a valid payload here"
    payloads: list[dict[str, object]] = []
    for kind, model in COMMAND_MODELS.items():
        valid = {"kind": kind, **_VALID[kind]}
        parse_command(valid)
        fields = [name for name in model.model_fields if name != "kind"]
        payloads += [{**valid, name: bad} for name in fields for bad in _BAD]
        payloads += [{k: v for k, v in valid.items() if k != name} for name in fields if name in valid]
        payloads.append({**valid, "surplus_field": 1})
    refused = []
    for payload in payloads:
        try:
            parse_command(payload)
        except ValidationError as error:
            refused.append((payload, describe_command_error(error)))
    return refused


def test_every_command_field_has_a_name_in_the_operators_words() -> None:
    from planner.commands import COMMAND_MODELS, FIELD_NAMES
    from planner.templates import Template, TemplateGoal

    models = [*COMMAND_MODELS.values(), Template, TemplateGoal]
    unnamed = sorted({name for model in models for name in model.model_fields} - set(FIELD_NAMES))
    assert not unnamed, f"fields a refusal would name raw: {unnamed}"
    assert all("_" not in name for name in FIELD_NAMES.values())


_PLAIN_WORDS = frozenset({"by"})
"""Field names that are also words of any sentence ("used by no goal"): raw only where a refusal
locates a problem in them ("by: cannot be blank")."""


def test_no_refusal_of_any_command_field_speaks_pydantic_or_names_a_raw_field() -> None:
    """What a console form or a command line gets back for any bad value of any command's field is one
    sentence in the operator's words: no pydantic phrase, no field as the code spells it."""
    import re

    from planner.commands import FIELD_NAMES

    renamed = [name for name, words in FIELD_NAMES.items() if name != words and name not in _PLAIN_WORDS]
    raw = re.compile(
        r"(?<![\w-])(?:"
        + "|".join(map(re.escape, renamed))
        + r")(?![\w-])"
        + "".join(rf"|(?<![\w-]){re.escape(name)}:" for name in _PLAIN_WORDS)
    )
    refused = _refusals()
    assert len(refused) > 1000, f"only {len(refused)} refusals: the corpus lost its bad values"
    problems = []
    for payload, sentence in refused:
        kind = str(payload["kind"])
        if "\n" in sentence or len(sentence) > 300 or not sentence.startswith("invalid "):
            problems.append((kind, "not one short sentence", sentence))
        if any(phrase.lower() in sentence.lower() for phrase in _PYDANTIC):
            problems.append((kind, "pydantic's wording", sentence))
        words = re.sub(r"'[^']*'", "…", sentence.removeprefix(f"invalid {kind.replace('_', ' ')} command"))
        for name in sorted(FIELD_NAMES.values(), key=len, reverse=True):
            words = words.replace(name, "…")  # "parent node" is the operator's name; "parent" alone is not
        # (quoted text is the operator's own: the name of a template parameter may be anything)
        named = raw.search(words)
        if named:
            problems.append((kind, f"the raw field name {named.group()!r}", sentence))
    assert not problems, "\n".join(map(str, problems[:20])) + f"\n({len(problems)} in all)"


def test_texts_are_stripped_and_an_empty_reject_reason_is_no_reason(brownie: Script) -> None:
    assert Edit(node="0.1", description="  Open it  ").description == "Open it"
    assert Reject(reason="").reason == "" and Reject().reason == ""
    with pytest.raises(ValidationError):
        Edit(node="0.1", description=" \u3000 ")  # an ideographic space is blank too


def test_breakpoints_can_change_while_running(brownie: Script) -> None:
    from planner.commands import SetBreakpoints
    from planner.config import Breakpoint

    state, engine = started(brownie, 1)
    assert outcome(state, SetBreakpoints(breakpoints=[Breakpoint.BEFORE_ACTION]))[0] == "command_applied"
    assert (
        outcome(state, SetBreakpoints(breakpoints=[Breakpoint.BEFORE_ACTION]))[1] == "those breakpoints are already set"
    )
    for _ in range(3):
        engine.step()
    assert (
        state.status is RunStatus.PAUSED
        and state.reason == "breakpoint: before 0.1 (type [12] [vegan chocolate brownie] [1])"
    )
    outcome(state, SetBreakpoints(breakpoints=[]))
    outcome(state, Resume())
    finish(state, engine)
    assert state.status is RunStatus.SUCCEEDED


def test_pruning_an_action_that_ran_warns_that_the_browser_is_not_undone(brownie: Script) -> None:
    state, _ = started(brownie, 4)  # 0.1 has run in the browser
    assert state.tree["0.1"].status is Status.SUCCESS
    applied = apply_command(state, Prune(node="0.1", reason="wrong search"))[-1]
    assert applied.kind is Kind.COMMAND_APPLIED
    assert applied.payload.warning == (
        f"already ran in the browser: 0.1 ({state.tree['0.1'].action}); "
        "pruning takes it out of the plan but does not undo it"
    )
    assert apply_command(state, Prune(node="0.3", reason="not needed"))[-1].payload.warning is None


def test_an_edited_node_keeps_what_it_said_before(brownie: Script) -> None:
    state, _ = started(brownie, 3)
    before = state.tree["0.3"].description
    apply_command(state, Edit(node="0.3", description="Note the rating"))
    apply_command(state, Edit(node="0.3", description="Note the rating and the author"))
    node = state.tree["0.3"]
    assert (node.description, node.earlier) == ("Note the rating and the author", (before, "Note the rating"))
    assert node.protected
