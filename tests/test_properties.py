"""Property tests: random plans x random interleavings of steps and operator commands."""

from __future__ import annotations

import itertools
from typing import Any

from conftest import new_state, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.browser.dry import DryEnvironment
from planner.commands import (
    Edit,
    Force,
    Inject,
    NodeBreakpoint,
    Pause,
    Prune,
    Reopen,
    Resume,
    SetBreakpoints,
    SetConstraints,
    Step,
    Stop,
    apply_command,
)
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.frames import next_position
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, SessionState, replay
from planner.status import CLOSED, legal_for_type
from planner.tree import ROOT_ID, NodeType, Status

TASK = "root task"


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    nodes: dict[str, Any] = {}
    fail: list[str] = []
    repairs: dict[str, Any] = {}
    counter = itertools.count(1)

    def leaf(description: str) -> None:
        action = draw(st.sampled_from([f"click [{next(counter)}]", f"note [fact {next(counter)}]"]))
        nodes[description] = {"type": "ACTION", "action": action}
        if draw(st.integers(0, 9)) < 2:
            fail.append(action)

    def build(description: str, depth: int) -> None:
        options = (
            ["AND", "OR"]
            if depth == 0
            else ["ACTION", "ACTION", "AND", "OR", "MISSING"]
            if depth < 3
            else ["ACTION", "MISSING"]
        )
        choice = draw(st.sampled_from(options))
        if choice == "MISSING":
            return
        if choice == "ACTION":
            leaf(description)
            return
        width = draw(st.integers(1, 3))
        children = [f"{description}/{i}" for i in range(width)]
        if choice == "OR":
            scores = draw(st.lists(st.floats(0.05, 1.0), min_size=width, max_size=width))
            nodes[description] = {
                "type": "OR",
                "children": [{"description": c, "score": s} for c, s in zip(children, scores)],
            }
        else:
            nodes[description] = {"type": "AND", "children": children}
        for child in children:
            build(child, depth + 1)
        if draw(st.booleans()):
            fix = f"{description}/fix"
            repairs[description] = {"add": [{"description": fix, "score": 0.5} if choice == "OR" else fix]}
            leaf(fix)

    build(TASK, 0)
    incomplete = [TASK] if draw(st.booleans()) else []
    return Script.model_validate({"nodes": nodes, "fail_actions": fail, "repairs": repairs, "incomplete": incomplete})


def check_invariants(state: SessionState) -> None:
    tree = state.tree
    roots = [node for node in tree.nodes.values() if node.parent is None]
    assert [node.id for node in roots] == [ROOT_ID]
    for node in tree.nodes.values():
        assert legal_for_type(node), f"{node.id} is {node.status} as {node.type}"
        if node.parent is not None:
            assert tree[node.parent].children.count(node.id) == 1
        for child in node.children:
            assert tree[child].parent == node.id
        if node.type is NodeType.OR:
            running = [c for c in tree.children(node) if c.status in (Status.VISITED, Status.FAIL)]
            assert len(running) <= 1
        if node.type is NodeType.UNKNOWN:
            assert all(c.status in CLOSED for c in tree.children(node))
    for node_id in state.proposals:
        planned = tree[node_id]
        assert planned.type is NodeType.UNKNOWN and planned.status not in CLOSED, f"a plan kept for {node_id}"
    position = next_position(tree)
    if position is not None:
        assert position.node.status not in CLOSED
        assert all(a.status not in CLOSED for a in tree.ancestors(position.node)), "work under a closed node"


def random_command(data: st.DataObject, state: SessionState):  # type: ignore[no-untyped-def]
    ids = sorted(state.tree.nodes)
    node = data.draw(st.sampled_from(ids))
    kind = data.draw(
        st.sampled_from(
            [
                "pause",
                "resume",
                "step",
                "stop",
                "inject",
                "prune",
                "edit",
                "reopen",
                "force",
                "breakpoints",
                "breakpoint",
                "constraints",
            ]
        )
    )
    if kind == "inject":
        node_type = data.draw(st.sampled_from([None, "AND", "OR"]))
        return Inject(
            parent=node,
            goals=[data.draw(st.sampled_from([f"{TASK}/0", "operator goal", "unscripted"]))],
            node_type=node_type,
            position=data.draw(st.sampled_from([None, 0])),
        )
    if kind == "prune":
        return Prune(node=node, reason="operator test")
    if kind == "edit":
        return Edit(
            node=node,
            description=data.draw(st.sampled_from([f"{TASK}/1", "renamed"])),
            reexpand=data.draw(st.booleans()),
        )
    if kind == "reopen":
        return Reopen(node=node)
    if kind == "force":
        return Force(node=node, child=data.draw(st.sampled_from(ids)))
    if kind == "breakpoints":
        return SetBreakpoints(breakpoints=data.draw(st.lists(st.sampled_from(list(Breakpoint)), unique=True)))
    if kind == "breakpoint":
        return NodeBreakpoint(node=node, off=data.draw(st.booleans()))
    if kind == "constraints":
        return SetConstraints(constraints=data.draw(st.lists(st.sampled_from(["vegan", "under $10", ""]), max_size=2)))
    return {"pause": Pause, "resume": Resume, "step": Step, "stop": Stop}[kind]()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts(), data=st.data(), no_repair=st.booleans(), no_or=st.booleans(), lookahead=st.integers(0, 3))
def test_random_plans_and_commands_keep_invariants(
    script: Script, data: st.DataObject, no_repair: bool, no_or: bool, lookahead: int
) -> None:
    config = EngineConfig(
        repair=not no_repair,
        or_alternatives=not no_or,
        max_steps=150,
        lookahead=lookahead,
        constraints=data.draw(st.booleans()),
    )
    state, log = new_state(TASK, config)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    sent = []
    for _ in range(data.draw(st.integers(0, 60))):
        if data.draw(st.integers(0, 3)) == 0:
            command = random_command(data, state)
            if sent and data.draw(st.integers(0, 4)) == 0:
                command = data.draw(st.sampled_from(sent))
            elif command not in sent:
                sent.append(command)
            log.extend(apply_command(state, command))
        else:
            log.extend(engine.step())
        check_invariants(state)
    for _ in range(400):  # let it finish: resume whatever is paused or stopped
        if state.finished:
            break
        if state.status is not RunStatus.RUNNING:
            log.extend(apply_command(state, Resume()))
        log.extend(engine.step())
        check_invariants(state)
    assert state.finished

    assert snapshot(replay(log)) == snapshot(state)
    handled = [e.payload.command_id for e in log if e.kind in (Kind.COMMAND_APPLIED, Kind.COMMAND_REJECTED)]
    assert len(handled) == len(set(handled))
    assert {c.command_id for c in sent} <= set(handled)


def test_replay_refuses_a_gap() -> None:
    import pytest

    from planner.errors import EventOrderError

    state, _log = new_state(TASK)
    with pytest.raises(EventOrderError):
        replay([Event.from_data(3, Kind.STEP, "0", {"frame": "ENTERING", "work": "expand"})], state)


def test_replay_refuses_an_approval_request_that_names_no_node() -> None:
    """A log whose approval request has no node id (a trace edited by hand) is refused as one naming an
    unknown node is, rather than folded into an approval of no node that the console would look up."""
    import pytest

    state, _log = new_state(TASK)
    event = Event.from_data(2, Kind.APPROVAL_REQUESTED, None, {"action": "click [1]", "rule": "guarded"})
    with pytest.raises(KeyError, match=r"event 2 \(approval_requested\) names no node"):
        replay([event], state)
    assert state.approval is None and state.seq == 1, "nothing of the refused event was folded in"
