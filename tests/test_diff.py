"""Plan diffs: what the timeline marks as changed since an event, and how a fork differs from its parent."""

from __future__ import annotations

from conftest import BROWNIE_TASK, load, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Prune, apply_command
from planner.diff import plan_diff
from planner.engine import Engine
from planner.models.scripted import ScriptedModel
from planner.state import replay
from ui.tree_chart import build_chart


def test_a_diff_names_added_changed_and_missing_nodes_in_id_order() -> None:
    state, log = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(load("brownie.json")), DryEnvironment())
    for _ in range(2):
        log.extend(engine.step())
    early = replay(list(log))
    log.extend(apply_command(state, Prune(node="0.3", reason="not needed")))
    for _ in range(6):
        log.extend(engine.step())
    diff = plan_diff(early.tree, state.tree)
    assert set(diff.changed) >= {"0.2", "0.3"} and "0" not in diff.added
    assert list(diff.added) == sorted(diff.added, key=lambda i: [int(p) for p in i.split(".")])
    assert all(node_id not in early.tree.nodes for node_id in diff.added) and diff.added
    assert plan_diff(state.tree, early.tree).missing == diff.added
    assert not plan_diff(state.tree, state.tree)


def test_the_past_chart_marks_each_node_that_changes_later() -> None:
    state, _ = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(load("brownie.json")), DryEnvironment())
    engine.step()
    engine.step()
    items = {
        item["id"]: item
        for item in build_chart(state, changed=["0.2"], collapse_closed=False).option["series"][0]["data"]
    }
    assert items["0.2"]["label"]["formatter"].startswith("Δ ")
    assert not items["0.1"]["label"]["formatter"].startswith("Δ ")
