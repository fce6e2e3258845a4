"""Undo and the edit diff: each plan edit records what it changed, and the operator's last edit can be
taken back (as events, through the status rules) while none of its nodes has run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import cli, command, finish, last_json, session_status, spawn
from conftest import BROWNIE_TASK, SCRIPTS, new_state, snapshot
from waiting import wait_until

from planner.browser.dry import DryEnvironment
from planner.commands import Edit, EditAction, Force, Inject, Prune, Reopen, Undo, apply_command, undo_refusal
from planner.diff import PlanChanges, edit_diffs
from planner.engine import Engine
from planner.events import Event, Kind
from planner.frames import next_position
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, SessionState, replay
from planner.tree import NodeType, Status

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


class Session:
    """A scripted session on the dry environment that keeps its whole log, so a fold of it can be
    compared with the live state at any point."""

    def __init__(self, script: Script, steps: int, task: str = BROWNIE_TASK) -> None:
        self.state, self.log = new_state(task)
        self.engine = Engine(self.state, ScriptedModel(script), DryEnvironment(script.fail_actions))
        self.step(steps)

    def step(self, count: int = 1) -> None:
        for _ in range(count):
            self.log += self.engine.step()

    def apply(self, command: object) -> Event:
        events = apply_command(self.state, command)  # type: ignore[arg-type]
        self.log += events
        return events[-1]

    def applied(self, command: object) -> Event:
        last = self.apply(command)
        assert last.kind is Kind.COMMAND_APPLIED, getattr(last.payload, "reason", last)
        return last

    def refused(self, command: object) -> str:
        last = self.apply(command)
        assert last.kind is Kind.COMMAND_REJECTED, f"{command} was applied"
        return last.payload.reason  # type: ignore[attr-defined]

    def folds_to_live_state(self) -> None:
        rebuilt = replay(self.log)
        assert snapshot(rebuilt) == snapshot(self.state), "the fold of the log differs from the live state"
        assert rebuilt.edits == self.state.edits
        assert next_position(rebuilt.tree) == next_position(self.state.tree)


def nodes_of(state: SessionState) -> dict[str, dict]:
    return {node.id: node.model_dump(mode="json") for node in state.tree.walk()}


def test_undo_of_an_inject_takes_its_nodes_out_of_the_plan(brownie: Script) -> None:
    s = Session(brownie, 3)
    before = nodes_of(s.state)
    applied = s.applied(Inject(parent="0", goals=["check the rating", "check the price"], position=1))
    assert [c.id for c in applied.payload.changes] == ["0.4", "0.5"]  # type: ignore[attr-defined]
    assert undo_refusal(s.state) is None
    undo = s.applied(Undo())
    assert undo.payload.undoes == applied.payload.command_id  # type: ignore[attr-defined]
    assert [s.state.tree[i].status for i in ("0.4", "0.5")] == [Status.DELETED, Status.DELETED]
    assert s.state.tree["0.4"].reason == "undone by operator"
    after = nodes_of(s.state)
    assert {k: v for k, v in after.items() if k not in ("0.4", "0.5")} == {
        k: {**v, "children": [*v["children"][:1], "0.4", "0.5", *v["children"][1:]]} if k == "0" else v
        for k, v in before.items()
    }, "every other node is as it was before the inject (the root keeps the ids, as history)"
    assert (
        s.state.edits == [] and undo_refusal(s.state) == "nothing to undo: no plan edit of yours is left to take back"
    )
    s.folds_to_live_state()
    s.step(20)
    assert s.state.status is RunStatus.SUCCEEDED and s.state.tree["0.4"].status is Status.DELETED


def test_undo_of_a_prune_puts_the_subtree_back_as_it_was(brownie: Script) -> None:
    s = Session(brownie, 4)  # 0.2 is an OR in progress with two alternatives
    before = nodes_of(s.state)
    s.applied(Prune(node="0.2", reason="not needed"))
    assert s.state.tree["0.2"].status is Status.PRUNED and s.state.tree["0.2.1"].status is Status.PRUNED
    s.applied(Undo())
    assert nodes_of(s.state) == before
    s.folds_to_live_state()
    s.step(20)
    assert s.state.status is RunStatus.SUCCEEDED and s.state.tree["0.2.1"].status is Status.SUCCESS


def test_undo_of_an_edit_with_reexpand_restores_the_node_and_its_children(brownie: Script) -> None:
    s = Session(brownie, 4)
    before = nodes_of(s.state)
    s.applied(Edit(node="0.2", description="Open recipe B (4.5 stars)", reexpand=True))
    assert s.state.tree["0.2"].type is NodeType.UNKNOWN
    s.applied(Undo())
    assert nodes_of(s.state) == before
    s.folds_to_live_state()


def test_undo_of_force_reopen_and_an_action_edit(brownie: Script) -> None:
    s = Session(brownie, 4)
    before = nodes_of(s.state)
    s.applied(Force(node="0.2", child="0.2.2"))
    s.applied(Undo())
    assert nodes_of(s.state) == before and s.state.tree["0.2"].forced is None
    s.applied(Prune(node="0.3", reason="later"))
    pruned = nodes_of(s.state)
    s.applied(Reopen(node="0.3"))
    s.applied(Undo())
    assert nodes_of(s.state) == pruned
    s.step(1)  # 0.2.1 is expanded into an action
    planned = nodes_of(s.state)
    s.applied(EditAction(node="0.2.1", action="click [33]"))
    s.applied(Undo())
    assert nodes_of(s.state) == planned
    s.folds_to_live_state()


def test_a_second_undo_takes_back_the_edit_before(brownie: Script) -> None:
    s = Session(brownie, 3)
    first = nodes_of(s.state)
    s.applied(Inject(parent="0", goals=["extra"]))
    second = nodes_of(s.state)
    s.applied(Prune(node="0.3", reason="not needed"))
    s.applied(Undo())
    assert nodes_of(s.state) == second, "the first undo takes back the prune"
    s.applied(Undo())
    assert s.state.tree["0.4"].status is Status.DELETED
    assert {k: v for k, v in nodes_of(s.state).items() if k != "0.4"} == {
        k: {**v, "children": [*v["children"], "0.4"]} if k == "0" else v for k, v in first.items()
    }
    assert s.refused(Undo()) == "nothing to undo: no plan edit of yours is left to take back"
    s.folds_to_live_state()


def test_undo_is_refused_once_a_node_of_the_edit_ran(brownie: Script) -> None:
    s = Session(brownie, 3)
    s.applied(Inject(parent="0", goals=["Note the recipe"], position=1))  # 0.4 runs next, before 0.2
    s.step(1)
    assert s.state.tree["0.4"].status is not Status.UNVISITED
    refusal = s.refused(Undo())
    assert refusal.startswith("0.4 already ran since the inject at 0 (it is "), refusal
    assert refusal.endswith("): undo would take back a plan the agent has acted on"), refusal
    assert s.state.tree["0.4"].status is not Status.DELETED
    s.folds_to_live_state()


def test_undo_never_skips_to_an_earlier_edit_whose_nodes_ran(brownie: Script) -> None:
    s = Session(brownie, 3)
    s.applied(Inject(parent="0", goals=["Note the recipe"], position=1))
    s.step(2)  # 0.4 runs
    s.applied(Prune(node="0.3", reason="not needed"))
    s.applied(Undo())
    assert s.state.tree["0.3"].status is Status.UNVISITED
    assert "0.4 already ran since the inject at 0" in s.refused(Undo())
    assert s.state.edits and s.state.tree["0.4"].status is Status.SUCCESS


def test_undo_of_a_prune_is_refused_once_the_parent_finished_without_it(brownie: Script) -> None:
    s = Session(brownie, 4)
    s.applied(Prune(node="0.2.2", reason="one recipe is enough"))
    for _ in range(10):  # 0.2.1 runs and succeeds, so the OR 0.2 succeeds
        s.step()
        if s.state.tree["0.2"].status is Status.SUCCESS:
            break
    assert s.state.tree["0.2"].status is Status.SUCCESS
    assert s.refused(Undo()) == (
        "0.2 is SUCCESS since the prune at 0.2.2: undo would put 0.2.2 back under a closed node; reopen 0.2.2 instead"
    )


def test_undo_waits_while_an_action_waits_for_approval(brownie: Script) -> None:
    s = Session(brownie, 3)
    s.applied(Inject(parent="0", goals=["extra"]))
    s.engine.guard = lambda action, _task: "guarded"  # type: ignore[attr-defined]
    s.step(3)
    assert s.state.status is RunStatus.AWAITING_APPROVAL, s.state.reason
    assert s.refused(Undo()) == "an action is waiting for approval: approve, edit or reject it first"


def test_edit_diffs_read_the_operators_edits_and_find_the_engines(brownie: Script) -> None:
    s = Session(brownie, 4)
    s.applied(Inject(parent="0", goals=["extra"]))
    s.applied(Prune(node="0.3", reason="not needed"))
    s.applied(Undo())
    s.applied(Edit(node="0.2", description="Open recipe B (4.5 stars)", reexpand=True))
    s.step(1)  # the engine expands 0.2 again
    diffs = edit_diffs(s.log)
    assert [(d.by, d.node) for d in diffs] == [
        ("inject", "0"),
        ("prune", "0.3"),
        ("undo", "0.3"),
        ("edit", "0.2"),
        ("re-expansion", "0.2"),
    ]
    inject, prune, undo, edit, again = diffs
    assert [c.id for c in inject.added] == ["0.4"] and not inject.removed and not inject.changed
    assert [c.id for c in prune.removed] == ["0.3"] and prune.removed[0].before.status is Status.UNVISITED  # type: ignore[union-attr]
    assert [c.id for c in undo.changed] == ["0.3"] and undo.changed[0].after.status is Status.UNVISITED
    assert [c.id for c in edit.removed] == ["0.2.1", "0.2.2"]
    assert [(c.id, c.before.description, c.after.description) for c in edit.changed] == [  # type: ignore[union-attr]
        ("0.2", "Select a recipe rated 4+", "Open recipe B (4.5 stars)")
    ]
    assert [(c.id, c.after.type) for c in again.changed] == [("0.2", NodeType.ACTION)]


def test_plan_changes_fold_a_growing_log_into_the_same_diffs_and_state(brownie: Script) -> None:
    """The console's follower reads a log in pieces as it grows, folding each event once: it must find
    the edits a whole-log read finds, each as the event that completes it is folded, and the same state."""
    s = Session(brownie, 4)
    state, changes, found = SessionState(), PlanChanges(), []
    s.applied(Inject(parent="0", goals=["extra"]))
    s.applied(Prune(node="0.3", reason="not needed"))
    for event in s.log:  # the first piece: what the log holds so far
        found += [diff] if (diff := changes.apply(state, event)) is not None else []
    seen = len(s.log)
    s.applied(Edit(node="0.2", description="Open recipe B (4.5 stars)", reexpand=True))
    s.step(1)  # the engine expands 0.2 again
    for event in s.log[seen:]:
        found += [diff] if (diff := changes.apply(state, event)) is not None else []
    assert found == changes.diffs == edit_diffs(s.log)
    assert [(d.by, d.node) for d in found] == [
        ("inject", "0"),
        ("prune", "0.3"),
        ("edit", "0.2"),
        ("re-expansion", "0.2"),
    ]
    assert snapshot(state) == snapshot(replay(s.log)), "apply folds each event as planner.state.apply does"


def test_edit_diffs_show_a_repair() -> None:
    task = "buy it"
    script = Script.model_validate(
        {
            "nodes": {
                task: {"type": "AND", "children": ["try", "then"]},
                "try": {"type": "ACTION", "action": "click [9]"},
                "then": {"type": "ACTION", "action": "click [2]"},
                "other": {"type": "ACTION", "action": "click [3]"},
            },
            "fail_actions": ["click [9]"],
            "repairs": {task: {"add": ["other"]}},
        }
    )
    s = Session(script, 12, task)
    repairs = [d for d in edit_diffs(s.log) if d.by == "repair"]
    assert len(repairs) == 1 and repairs[0].node == "0", edit_diffs(s.log)
    assert [c.id for c in repairs[0].added] == ["0.3"]


def test_an_edit_recorded_before_undo_existed_reads_with_no_changes() -> None:
    _state, log = new_state("t")
    old = {"command_id": "c1", "command": {"kind": "pause"}, "warning": None}
    event = Event.from_data(2, "command_applied", None, old, version=1)
    assert event.version == 3 and event.payload.changes == [] and event.payload.undoes is None  # type: ignore[attr-defined]
    assert replay([*log, event]).edits == []


def test_the_cli_undo_verb_takes_back_the_last_edit(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner = spawn(
        "run", "--db", db, "--task", BROWNIE_TASK, "--model", BROWNIE, "--breakpoint", "after_expansion", "--id", "u1"
    )
    try:
        wait_until(
            lambda: session_status(db, "u1") == "paused", "the run to pause at its first breakpoint", timeout=120
        )
        injected = command(db, "u1", "inject", "--parent", "0", "--goal", "look again")
        assert injected["result"] == "applied", injected
        undone = command(db, "u1", "undo")
        assert undone["result"] == "applied", undone
        again = cli("command", "u1", "--db", db, "--wait", "--timeout", "120", "undo")
        assert again.returncode == 1, again.stdout
        assert last_json(again)["reason"] == "nothing to undo: no plan edit of yours is left to take back"
        assert command(db, "u1", "stop")["result"] == "applied"
        finish(runner, "the stopped run to exit")
    finally:
        runner.kill()
    trace = last_json(cli("export", "u1", "--db", db))
    nodes = {n["id"]: n for n in trace["nodes"]}
    assert nodes["0.4"]["status"] == "DELETED" and nodes["0.4"]["description"] == "look again"
    kinds = [e["kind"] for e in trace["events"]]
    assert "node_restored" in kinds, json.dumps(kinds)


@pytest.mark.parametrize("verb", ["undo"])
def test_the_undo_verb_takes_no_options(verb: str) -> None:
    refused = cli("command", "x", verb, "--node", "0", check=False)
    assert refused.returncode == 2 and "--node" in refused.stderr, refused.stderr


def test_undo_of_a_force_is_refused_once_the_chosen_alternative_started(brownie: Script) -> None:
    s = Session(brownie, 4)
    s.applied(Force(node="0.2", child="0.2.2"))
    s.step(1)
    assert s.state.tree["0.2.2"].status is not Status.UNVISITED
    refusal = s.refused(Undo())
    assert refusal.startswith("0.2.2 already ran since the force at 0.2 (it is "), refusal
    assert s.state.tree["0.2"].forced == "0.2.2"
