"""The paper's worked example (section 3, "vegan chocolate brownie") and its failure variant."""

from __future__ import annotations

from conftest import BROWNIE_TASK, frames, load, run_script

from planner.config import EngineConfig
from planner.events import Kind
from planner.models.scripted import Script
from planner.state import RunStatus
from planner.tree import NodeType, Origin, Status


def test_brownie_success_follows_the_papers_frames(brownie: Script) -> None:
    state, log, _ = run_script(brownie, BROWNIE_TASK)

    assert frames(log) == [
        ("0", "ENTERING", "expand"),
        ("0.1", "ENTERING", "expand"),
        ("0.1", "ENTERING", "execute"),
        ("0.2", "ENTERING", "expand"),
        ("0.2.1", "ENTERING", "expand"),
        ("0.2.1", "ENTERING", "execute"),
        ("0.2", "EXITING", "check"),
        ("0.3", "ENTERING", "expand"),
        ("0.3", "ENTERING", "execute"),
        ("0", "EXITING", "check"),
        ("0", None, "finish"),
    ]
    tree = state.tree
    assert tree["0"].type is NodeType.AND and tree["0.2"].type is NodeType.OR
    assert {n.id: n.status for n in tree.walk()} == {
        "0": Status.SUCCESS,
        "0.1": Status.SUCCESS,
        "0.2": Status.SUCCESS,
        "0.2.1": Status.SUCCESS,
        "0.2.2": Status.UNVISITED,
        "0.3": Status.SUCCESS,
    }
    assert not any(getattr(e.payload, "frame", None) == "FAILED" for e in log if e.kind is Kind.STEP)
    assert state.status is RunStatus.SUCCEEDED
    assert state.final_answer == "Fudgy vegan brownies (4.8 stars)"
    assert state.notes == ["Fudgy vegan brownies, 4.8 stars"]


def test_note_action_skips_summary_and_global_update(brownie: Script) -> None:
    _, log, _ = run_script(brownie, BROWNIE_TASK)
    questions_after = {
        e.node_id: [x.payload.question for x in log if x.kind is Kind.MODEL_CALL and x.node_id == e.node_id]
        for e in log
        if e.kind is Kind.ACTION_EXECUTED
    }
    assert questions_after["0.1"] == ["expand", "observe"]
    assert questions_after["0.3"] == []  # planned ahead on the page 0.2.1 reached; a note is not observed
    planned = next(e for e in log if e.kind is Kind.NODE_EXPANDED and e.node_id == "0.3")
    assert planned.payload.action == brownie.nodes["Note the recipe"].action
    assert "planned ahead" in planned.payload.note


def test_without_lookahead_every_action_node_has_its_own_expansion(brownie: Script) -> None:
    state, log, _ = run_script(brownie, BROWNIE_TASK, EngineConfig(constraints=False, lookahead=0))
    expanded = {e.node_id for e in log if e.kind is Kind.MODEL_CALL and e.payload.question == "expand"}
    assert expanded == {n.id for n in state.tree.walk() if n.type is not NodeType.UNKNOWN}
    assert state.status is RunStatus.SUCCEEDED


def test_brownie_failure_variant_deletes_sibling_and_repairs_root() -> None:
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK)

    assert frames(log) == [
        ("0", "ENTERING", "expand"),
        ("0.1", "ENTERING", "expand"),
        ("0.1", "ENTERING", "execute"),
        ("0.2", "ENTERING", "expand"),
        ("0.2.1", "ENTERING", "expand"),
        ("0.2.1", "ENTERING", "execute"),
        ("0.2.1", "FAILED", "recover"),
        ("0.2", "FAILED", "recover"),
        ("0.2.2", "ENTERING", "expand"),
        ("0.2.2", "ENTERING", "execute"),
        ("0.2.2", "FAILED", "recover"),
        ("0.2", "FAILED", "recover"),
        ("0", "FAILED", "recover"),
        ("0.4", "ENTERING", "expand"),
        ("0.4", "ENTERING", "execute"),
        ("0.5", "ENTERING", "expand"),
        ("0.5", "ENTERING", "execute"),
        ("0", "EXITING", "check"),
        ("0", None, "finish"),
    ]
    tree = state.tree
    assert tree["0.2.1"].status is Status.PRUNED and tree["0.2.2"].status is Status.PRUNED
    assert tree["0.2"].status is Status.PRUNED
    assert tree["0.3"].status is Status.DELETED
    assert tree["0.3"].reason == "earlier step 0.2 failed"
    assert tree["0"].revisions == 1
    assert [tree[i].origin for i in ("0.4", "0.5")] == [Origin.REPAIR, Origin.REPAIR]
    rollbacks = [e for e in log if e.kind is Kind.ROLLBACK]
    assert [(e.node_id, e.payload.target, e.payload.to) for e in rollbacks] == [("0.2", tree["0.2.2"].url, "0.2.2")]
    assert tree["0.2.2"].url == "dry://type-12-vegan-chocolate-brownie-1"  # where the alternatives were planned
    assert state.status is RunStatus.SUCCEEDED
    assert state.notes == ["Vegan cocoa brownies, 4.6 stars"]


def test_failure_variant_without_repair_fails_the_session() -> None:
    from planner.config import EngineConfig

    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK, EngineConfig(repair=False))
    assert state.status is RunStatus.FAILED
    assert state.tree["0"].status is Status.PRUNED
    assert not any(e.kind is Kind.NODES_ADDED for e in log)
    assert "0.2 failed" in (state.reason or "")
