"""Co-planning: "Start paused" stops once the root is expanded, before any browser action, and the
`plan` command sets a node's children as a whole (keep, reword, reorder, remove, add) as one edit that
the diff shows and an undo takes back, order included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, last_json
from conftest import BROWNIE_TASK, MECHANICS, SCRIPTS, new_state, snapshot
from pydantic import ValidationError

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import Inject, Pause, Resume, SetPlan, Undo, apply_command, describe_command_error, parse_command
from planner.config import Breakpoint
from planner.diff import edit_diffs
from planner.engine import Engine
from planner.events import CommandApplied, Event, Kind
from planner.frames import Frame, next_position
from planner.models.scripted import Script, ScriptedModel
from planner.state import RunStatus, replay
from planner.tree import Origin, Status
from sessions.client.creation import create_session
from sessions.store.reading import load_state
from sessions.store.sql import open_store

REVIEW = MECHANICS.model_copy(update={"review_first_plan": True})
EVERY_PLAN = REVIEW.model_copy(update={"breakpoints": frozenset({Breakpoint.AFTER_EXPANSION})})


class Review:
    """A scripted session started the console's "Start paused" way, run to its first plan review."""

    def __init__(self, script: Script, config: Any = REVIEW) -> None:
        self.state, self.log = new_state(BROWNIE_TASK, config)
        self.engine = Engine(self.state, ScriptedModel(script), DryEnvironment(script.fail_actions))
        self.run()

    def run(self, limit: int = 100) -> None:
        """Step until the session stops running (paused or finished)."""
        for _ in range(limit):
            events = self.engine.step()
            self.log += events
            if self.state.status is not RunStatus.RUNNING:
                return

    def send(self, command: Any) -> Event:
        events = apply_command(self.state, command)
        self.log += events
        return events[-1]

    def applied(self, command: Any) -> CommandApplied:
        last = self.send(command)
        assert last.kind is Kind.COMMAND_APPLIED, getattr(last.payload, "reason", last)
        return last.payload  # type: ignore[return-value]

    def refused(self, command: Any) -> str:
        last = self.send(command)
        assert last.kind is Kind.COMMAND_REJECTED, f"{command} was applied"
        return last.payload.reason  # type: ignore[attr-defined]

    def children(self, node_id: str = "0") -> list[str]:
        return list(self.state.tree[node_id].children)

    def folds_to_live_state(self) -> None:
        rebuilt = replay(self.log)
        assert snapshot(rebuilt) == snapshot(self.state), "the fold of the log differs from the live state"
        assert [n.children for n in rebuilt.tree.walk()] == [n.children for n in self.state.tree.walk()]
        assert rebuilt.edits == self.state.edits


def plan(*children: str, node: str = "0", start: bool = False) -> SetPlan:
    return SetPlan(node=node, children=list(children), start=start)


def test_start_paused_stops_at_the_roots_first_plan_before_any_browser_action(brownie: Script) -> None:
    s = Review(brownie)
    assert (s.state.status, s.state.reason) == (RunStatus.PAUSED, "plan review: 0 expanded as AND")
    assert s.state.metrics.actions == 0 and s.children() == ["0.1", "0.2", "0.3"]
    s.applied(plan("0.1", "0.2", "0.3", start=True))  # nothing to change: it only starts the run
    s.run()
    assert s.state.status is RunStatus.SUCCEEDED, "later expansions (0.1, 0.2 ...) are not reviewed"
    without = Review(brownie, MECHANICS)
    assert without.state.status is RunStatus.SUCCEEDED, "without the flag the run never stops"


def test_a_plan_keeps_rewords_removes_adds_and_orders_the_children_in_one_edit(brownie: Script) -> None:
    s = Review(brownie)
    applied = s.applied(plan("0.3", "Note the recipe", "0.1=Search for vegan chocolate brownie, again"))
    tree = s.state.tree
    assert s.children() == ["0.3", "0.2", "0.4", "0.1"], "the plan fills its places; 0.2 stays as history"
    assert [c for c in s.children() if tree[c].status is not Status.PRUNED] == ["0.3", "0.4", "0.1"]
    assert (tree["0.2"].status, tree["0.2"].reason) == (Status.PRUNED, "operator: removed in plan review")
    assert tree["0.1"].description == "Search for vegan chocolate brownie, again" and tree["0.1"].protected
    assert (tree["0.4"].origin, tree["0.4"].status, tree["0.4"].description) == (
        Origin.OPERATOR,
        Status.UNVISITED,
        "Note the recipe",
    )
    assert [event.kind for event in s.log[-5:]] == [
        Kind.STATUS_CHANGED,
        Kind.NODE_REWRITTEN,
        Kind.NODES_ADDED,
        Kind.CHILDREN_REORDERED,
        Kind.COMMAND_APPLIED,
    ]
    assert sum(1 for e in s.log if e.kind is Kind.COMMAND_APPLIED) == 1, "one edit, one command_applied"
    changes = {change.id: change for change in applied.changes}
    assert set(changes) == {"0", "0.1", "0.2", "0.4"}
    assert changes["0"].before is not None and changes["0"].before.order == ("0.1", "0.2", "0.3")
    assert changes["0"].after.order == ("0.3", "0.2", "0.4", "0.1")
    diff = edit_diffs(s.log)[-1]
    assert (diff.by, [c.id for c in diff.added], [c.id for c in diff.removed]) == ("plan", ["0.4"], ["0.2"])
    assert [c.id for c in diff.changed] == ["0", "0.1"]
    position = next_position(tree)
    assert position is not None and (position.node.id, position.frame) == ("0.3", Frame.ENTERING)
    s.folds_to_live_state()


def test_the_run_follows_the_new_order(brownie: Script) -> None:
    s = Review(brownie)
    s.applied(plan("0.1", "Note the recipe", "0.3", start=True))
    s.run()
    assert s.state.status is RunStatus.SUCCEEDED
    entered = [e.node_id for e in s.log if e.kind is Kind.STEP and e.node_id in ("0.3", "0.4")]
    assert entered[0] == "0.4", "the new step runs before 0.3, as the plan put it"
    assert s.state.tree["0.2"].status is Status.PRUNED and s.state.tree["0.2"].type.value == "UNKNOWN"
    assert s.state.metrics.actions == 3, "search, then the two notes; the pruned 0.2 never ran"
    s.folds_to_live_state()


def test_undo_restores_the_order_the_wording_and_the_removed_children(brownie: Script) -> None:
    s = Review(brownie)
    before = {n.id: (n.status, n.description, n.protected, list(n.children)) for n in s.state.tree.walk()}
    applied = s.applied(plan("0.3", "a new step", "0.1=reworded"))
    undo = s.applied(Undo())
    assert undo.undoes == applied.command_id and s.state.edits == []
    tree = s.state.tree
    assert s.children() == ["0.1", "0.2", "0.3", "0.4"], "the old order, the added child after it as history"
    assert (tree["0.4"].status, tree["0.4"].reason) == (Status.DELETED, "undone by operator")
    after = {n.id: (n.status, n.description, n.protected, list(n.children)) for n in tree.walk() if n.id != "0.4"}
    assert after == {**before, "0": (*before["0"][:3], ["0.1", "0.2", "0.3", "0.4"])}
    assert [c.id for c in edit_diffs(s.log)[-1].changed if c.after.order] == ["0"], "the undo shows the order"
    s.folds_to_live_state()
    assert s.state.tree.new_child_ids(tree["0"], 1) == ["0.5"], "ids are never reused"


def test_undo_is_refused_once_the_reordered_children_changed_again(brownie: Script) -> None:
    s = Review(brownie)
    s.applied(plan("0.3", "0.1", "0.2"))
    s.applied(Inject(parent="0", goals=["one more"]))
    s.applied(Undo())  # the inject
    s.applied(plan("0.1", "0.3", "0.2"))
    s.state.tree["0"].children.reverse()  # as if something had moved them behind the edit's back
    assert "0's children changed again after the plan at 0" in s.refused(Undo())


@pytest.mark.parametrize(
    ("children", "refusal"),
    [
        (["0.1", "0.1", "0.2"], "0.1 listed more than once; list each child once"),
        (["0.1", "0.9"], "there is no node 0.9 in this session; a new sub-goal is written without an id"),
        (["0.1", "0.2.1"], "there is no node 0.2.1 in this session"),
        (["0.1", "0"], "0 is not a child of 0"),
        (["0.1", "0.2", "0.3"], "that is the plan of 0 already"),
    ],
)
def test_a_plan_that_names_children_wrongly_is_refused(brownie: Script, children: list[str], refusal: str) -> None:
    s = Review(brownie)
    tree = snapshot(s.state)
    assert refusal in s.refused(plan(*children))
    assert snapshot(s.state)["nodes"] == tree["nodes"], "a refused plan changes nothing"


def test_a_child_that_started_cannot_be_removed_moved_or_changed(brownie: Script) -> None:
    s = Review(brownie, EVERY_PLAN)
    s.applied(Resume())
    s.run()
    assert s.state.reason == "plan review: 0.1 expanded as ACTION" and s.state.tree["0.1"].status is Status.VISITED
    assert "0.1 already started or finished and cannot be removed; keep it in the plan" in s.refused(plan("0.2", "0.3"))
    assert "0.1 already started or finished and cannot be changed; keep it as worded" in s.refused(
        plan("0.1=something else", "0.2", "0.3")
    )
    s.applied(plan("new first", "0.1", "0.3", "0.2"))
    assert s.children() == ["0.4", "0.1", "0.3", "0.2"], "an open step may go before a started one"


def test_moving_a_started_child_past_another_started_one_is_refused(brownie: Script) -> None:
    s = Review(brownie, EVERY_PLAN)
    for _ in range(2):  # 0.1 expanded, then run; 0.2 expanded
        s.applied(Resume())
        s.run()
    assert s.state.reason == "plan review: 0.2 expanded as OR" and s.state.tree["0.1"].status is Status.SUCCESS
    assert s.refused(plan("0.2", "0.1", "0.3")) == (
        "0.1, 0.2 already started or finished and cannot be moved; keep them in the order 0.1, 0.2"
    )
    s.applied(plan("0.1", "0.3", "0.2"))
    assert s.children() == ["0.1", "0.3", "0.2"], "an open step may go between started ones"


def test_only_an_open_expanded_node_has_a_plan_to_set(brownie: Script) -> None:
    s = Review(brownie)
    assert s.refused(plan("x", node="0.1")) == "0.1 is not expanded yet; inject its sub-goals instead"
    s.applied(plan("0.1", "0.2", "0.3", start=True))
    s.log += s.engine.step()  # 0.1 expanded as an action
    s.applied(Pause())
    assert s.refused(plan("x", node="0.1")) == "0.1 is an action and has no sub-goals; plan its parent instead"


@pytest.mark.parametrize(
    ("children", "message"),
    [
        ([], "invalid plan command: sub-goals: "),
        (["0.1", "   "], "invalid plan command: sub-goals #2: cannot be blank; write some text"),
        (["0.1="], "invalid plan command: sub-goals #1: cannot be blank; write some text"),
        ([{"id": None, "description": " "}], "invalid plan command: sub-goals #1: cannot be blank; write some text"),
    ],
)
def test_an_empty_plan_or_a_blank_child_is_refused_in_one_sentence(children: list[Any], message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        parse_command({"kind": "plan", "node": "0", "children": children})
    sentence = describe_command_error(refused.value)
    assert sentence.startswith(message) and "\n" not in sentence, sentence


def test_a_plan_is_read_from_lines_and_from_json_objects_alike() -> None:
    lines = parse_command({"kind": "plan", "node": "0", "children": ["0.2", "0.1 = new text", "a goal", "=3=three"]})
    objects = parse_command(
        {
            "kind": "plan",
            "node": "0",
            "children": [
                {"id": "0.2"},
                {"id": "0.1", "description": "new text"},
                {"description": "a goal"},
                {"description": "3=three"},
            ],
        }
    )
    expected = [("0.2", None), ("0.1", "new text"), (None, "a goal"), (None, "3=three")]
    assert isinstance(lines, SetPlan) and isinstance(objects, SetPlan)
    assert lines.entries() == objects.entries() == expected


def test_the_command_line_sends_a_plan(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    script = f"script:{SCRIPTS / 'brownie.json'}"
    session_id = create_session(store, BROWNIE_TASK, script, start_url=DRY_START, config=REVIEW)
    paused = cli("resume", session_id, "--db", db, "--exit-on-pause", check=False)
    assert paused.returncode == 3, paused.stderr
    assert load_state(store, session_id).reason == "plan review: 0 expanded as AND"
    sent = cli(
        "command", session_id, "--db", db, "plan", "--node", "0", "--child", "0.1", "--child", "Note the recipe",
        "--child", "0.3", "--start",
    )  # fmt: skip
    assert last_json(sent)["result"] == "queued"
    assert last_json(cli("resume", session_id, "--db", db))["status"] == "succeeded"
    state = load_state(store, session_id)
    assert state.tree["0"].children == ["0.1", "0.2", "0.4", "0.3"]
    assert state.tree["0.2"].status is Status.PRUNED and state.tree["0.4"].status is Status.SUCCESS
