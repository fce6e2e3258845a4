"""The plan chart: what each node looks like, which nodes are drawn, and that page text stays inert."""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import BROWNIE_TASK, load, new_state, run_script

from planner.browser.dry import DryEnvironment
from planner.commands import Edit, EditAction, Inject, Pause, Prune, Reopen, apply_command
from planner.engine import Engine
from planner.frames import active_path
from planner.models.scripted import ScriptedModel
from planner.state import SessionState
from planner.tree import ROOT_ID, Node, NodeType, Status
from ui.tree_chart import SERIES_ID, build_chart, clicked_node, legend_markdown

SHAPES = {"AND": "rect", "OR": "diamond", "ACTION": "circle", "UNKNOWN": "triangle"}
TAGS = {"AND": "AND", "OR": "OR", "ACTION": "ACT", "UNKNOWN": "?"}
AMBER = "#FFB000"


def synthetic(branching: int, depth: int, done: float = 0.5) -> SessionState:
    """A full AND tree of actions with the first `done` share of leaves finished, parents closed when
    all their children are: the agent is midway, like a long run seen from the console."""
    state = SessionState(task="synthetic")
    nodes = state.tree.nodes
    leaves: list[Node] = []

    def grow(node_id: str, parent: str | None, level: int) -> None:
        node = Node(id=node_id, parent=parent, description=f"step {node_id}", status=Status.VISITED)
        nodes[node_id] = node
        if level == depth:
            node.type, node.status, node.action = NodeType.ACTION, Status.UNVISITED, f"click [{len(nodes)}]"
            leaves.append(node)
            return
        node.type = NodeType.AND
        node.children = [f"{node_id}.{i}" for i in range(1, branching + 1)]
        for child in node.children:
            grow(child, node_id, level + 1)

    grow(ROOT_ID, None, 0)
    for leaf in leaves[: int(len(leaves) * done)]:
        leaf.status = Status.SUCCESS
    for node in reversed(list(state.tree.walk())):
        if node.children and all(nodes[child].status is Status.SUCCESS for child in node.children):
            node.status = Status.SUCCESS
    return state


def live(steps: int = 4) -> SessionState:
    """The brownie run paused mid-way: after 4 steps the agent is entering OR alternative 0.2.1."""
    script = load("brownie.json")
    state, _ = new_state(BROWNIE_TASK)
    engine = Engine(state, ScriptedModel(script), DryEnvironment(script.fail_actions))
    for _ in range(steps):
        engine.step()
    apply_command(state, Pause())
    return state


def series(chart: Any) -> dict[str, Any]:
    return chart.option["series"][0]


def items_by_id(chart: Any) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in series(chart)["data"]}


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


# -- where ECharts draws the chart -----------------------------------------------------------------

NARROWEST = 400
"""Pixels: the narrowest chart the console draws (a fork beside its parent), whose width is not known
to the chart's builder; what must be in view is checked in a chart this wide."""
LABEL_LINES = 4
"""Lines a node's label may take: its marks, type and id, then a description wrapped at its width."""


def drawn_at(option: dict[str, Any], width: float, height: float) -> dict[str, tuple[float, float]]:
    """Node id -> the pixel where ECharts 6 draws it in a chart `width` × `height` pixels large.

    A graph series laid out by hand (`layout: "none"`) maps the data's bounding box (widened by 1 on
    both sides when flat) onto its layout box (`getLayoutRect`: `left`/`top`/`width`/`height`, which
    keeps the data's aspect at 80 % of the chart when no size is given), then puts its `center` at the
    box's centre, scaled by `zoom` (`View`). Checked against Chromium, old options and new, to within
    a pixel."""
    chart = option["series"][0]
    items = chart["data"]
    xs, ys = [float(item["x"]) for item in items], [float(item["y"]) for item in items]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - 1, y1 + 1
    aspect = (x1 - x0) / (y1 - y0)

    def size(value: Any, whole: float) -> float:
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str) and value.endswith("%"):
            return float(value[:-1]) * whole / 100
        return math.nan  # "center" and the like, or unset

    left_at, top_at = chart.get("left", "center"), chart.get("top", "center")  # the graph series' defaults
    right_at, bottom_at = chart.get("right"), chart.get("bottom")
    left, top, right, bottom = (
        size(left_at, width),
        size(top_at, height),
        size(right_at, width),
        size(bottom_at, height),
    )
    box_w, box_h = size(chart.get("width"), width), size(chart.get("height"), height)
    if math.isnan(box_w):
        box_w = width - right - left
    if math.isnan(box_h):
        box_h = height - bottom - top
    if math.isnan(box_w) and math.isnan(box_h):
        box_w, box_h = (width * 0.8, math.nan) if aspect > width / height else (math.nan, height * 0.8)
    box_w = aspect * box_h if math.isnan(box_w) else box_w
    box_h = box_w / aspect if math.isnan(box_h) else box_h
    left = width - right - box_w if math.isnan(left) else left
    top = height - bottom - box_h if math.isnan(top) else top
    if (left_at or right_at) == "center":
        left = width / 2 - box_w / 2
    if (top_at or bottom_at) in ("center", "middle"):
        top = height / 2 - box_h / 2
    left, top = (0.0 if math.isnan(left) else left), (0.0 if math.isnan(top) else top)

    def raw(x: float, y: float) -> tuple[float, float]:
        return left + (x - x0) * box_w / (x1 - x0), top + (y - y0) * box_h / (y1 - y0)

    middle = (left + box_w / 2, top + box_h / 2)
    centre = raw(*chart["center"]) if chart.get("center") else middle
    zoom = float(chart.get("zoom", 1))
    return {
        item["id"]: (middle[0] + zoom * (px - centre[0]), middle[1] + zoom * (py - centre[1]))
        for item, px, py in ((item, *raw(x, y)) for item, x, y in zip(items, xs, ys, strict=True))
    }


def label_box(option: dict[str, Any], node_id: str, at: tuple[float, float]) -> tuple[float, float, float, float]:
    """The pixels (left, top, right, bottom) a node drawn at `at` covers with its symbol and its label
    below it (the label's wrapping width and padding, `LABEL_LINES` lines at its line height)."""
    chart = option["series"][0]
    item = next(item for item in chart["data"] if item["id"] == node_id)
    label = chart["label"]
    vertical, sideways = label.get("padding", [0, 0])
    half = item["symbolSize"] / 2 + item["itemStyle"]["borderWidth"]
    wide = label["width"] / 2 + sideways
    below = half + label.get("distance", 5) + 2 * vertical + LABEL_LINES * label["lineHeight"]
    return at[0] - wide, at[1] - half, at[0] + wide, at[1] + below


def in_view(option: dict[str, Any], node_id: str, width: float, height: float) -> bool:
    """Whether a node and its label are drawn whole inside a chart `width` × `height` pixels large."""
    left, top, right, bottom = label_box(option, node_id, drawn_at(option, width, height)[node_id])
    return left >= 0 and top >= 0 and right <= width and bottom <= height


def fan(count: int) -> SessionState:
    """A root whose `count` actions wait in a row, the agent entering the first."""
    state = SessionState(task="check every printer")
    nodes = state.tree.nodes
    children = [f"0.{i}" for i in range(1, count + 1)]
    nodes[ROOT_ID] = Node(
        id=ROOT_ID, description="Check every printer", type=NodeType.AND, status=Status.VISITED, children=children
    )
    for child in children:
        nodes[child] = Node(id=child, parent=ROOT_ID, description=f"Check printer model {child} and its price")
        nodes[child].type, nodes[child].action = NodeType.ACTION, f"click [{child}]"
    return state


@pytest.fixture(scope="module")
def failed_run() -> SessionState:
    return run_script(load("brownie_fail.json"), BROWNIE_TASK)[0]


@pytest.fixture(scope="module")
def done_run() -> SessionState:
    return run_script(load("brownie.json"), BROWNIE_TASK)[0]


@pytest.fixture(scope="module")
def big() -> SessionState:
    state = synthetic(17, 3)
    assert len(state.tree) > 5000
    return state


def test_shape_and_tag_follow_type_colour_follows_status(failed_run: SessionState) -> None:
    chart = build_chart(failed_run, collapse_closed=False)
    items = items_by_id(chart)
    assert set(items) == set(failed_run.tree.nodes)
    colour_of: dict[Status, set[str]] = {}
    assert failed_run.failed, "the scripted run fails an action (then the engine prunes it)"
    for node in failed_run.tree.walk():
        item = items[node.id]
        assert item["symbol"] == SHAPES[node.type.value]
        assert item["label"]["formatter"].lstrip("✗✎↻ ").startswith(TAGS[node.type.value] + " " + node.id)
        assert item["label"]["formatter"].startswith("✗") is (node.id in failed_run.failed)
        if node.id in failed_run.failed:
            continue  # drawn as a failure at full strength whatever its status (the next tests)
        colour_of.setdefault(node.status, set()).add(item["itemStyle"]["color"])
        removed = node.status in (Status.PRUNED, Status.DELETED)
        assert (item["itemStyle"].get("opacity") == 0.35) is removed
        assert (item["itemStyle"].get("borderType") == "dashed") is removed
    assert {status.value for status in colour_of} == {"SUCCESS", "DELETED"}  # every pruned node here failed
    assert all(len(colours) == 1 for colours in colour_of.values())
    assert colour_of[Status.SUCCESS] != colour_of[Status.DELETED]


def test_every_open_status_has_its_own_colour() -> None:
    state = synthetic(2, 2, done=0)
    state.tree["0.1.1"].status = Status.SUCCESS
    state.tree["0.1.2"].status = Status.FAIL
    items = items_by_id(build_chart(state, collapse_closed=False))
    by_status = {node.status: items[node.id]["itemStyle"]["color"] for node in state.tree.walk()}
    assert set(by_status) == {Status.UNVISITED, Status.VISITED, Status.SUCCESS, Status.FAIL}
    assert len(set(by_status.values())) == 4


def test_indices_follow_plan_order_and_links_join_parent_to_child(failed_run: SessionState) -> None:
    chart = build_chart(failed_run, collapse_closed=False)
    assert chart.node_ids == [node.id for node in failed_run.tree.walk()]
    assert [item["id"] for item in series(chart)["data"]] == chart.node_ids
    assert chart.hidden == 0 and chart.collapsed == {}
    index = {node_id: i for i, node_id in enumerate(chart.node_ids)}
    expected = {(index[node.parent], index[node.id]) for node in failed_run.tree.walk() if node.parent}
    assert {(link["source"], link["target"]) for link in series(chart)["links"]} == expected
    assert series(chart)["layout"] == "none" and series(chart)["selectedMode"] == "single"
    assert series(chart)["id"] == SERIES_ID


def test_layout_is_a_tidy_top_down_tree() -> None:
    """Leaves evenly spaced, each parent above its children and centred over them, but a node on the
    way down to the agent is pulled toward the agent (within one leaf gap), still between its first
    and last child, so that way is in view wherever the agent is."""
    state = synthetic(3, 3)
    path = [node.id for node, _ in active_path(state.tree)]
    chart = build_chart(state, collapse_closed=False)
    assert chart == build_chart(state, collapse_closed=False)
    pos = {item["id"]: (item["x"], item["y"]) for item in series(chart)["data"]}
    leaves = [pos[node.id][0] for node in state.tree.walk() if not node.children]
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(leaves)}
    assert len(gaps) == 1
    gap = gaps.pop()
    assert gap > 0
    for node in state.tree.walk():
        if node.children:
            first, last = pos[node.children[0]], pos[node.children[-1]]
            assert all(pos[child][1] > pos[node.id][1] for child in node.children)
            assert first[0] <= pos[node.id][0] <= last[0]
            if node.id not in path:
                assert pos[node.id][0] == pytest.approx((first[0] + last[0]) / 2)
    agent = pos[path[-1]][0]
    assert all(abs(pos[node_id][0] - agent) <= gap for node_id in path), [pos[node_id] for node_id in path]
    row = {item["id"]: item["x"] for item in series(build_chart(fan(20)))["data"]}
    assert row[ROOT_ID] == row["0.2"] and row["0.1"] == 0, "a row's parent is pulled toward the agent, in 0.1"


def test_current_node_and_active_path_stand_out() -> None:
    state = live()
    path = [node.id for node, _ in active_path(state.tree)]
    assert path == ["0", "0.2", "0.2.1"]
    chart = build_chart(state)
    items = items_by_id(chart)
    current = items["0.2.1"]
    assert current["itemStyle"]["borderWidth"] == 4
    assert current["symbolSize"] > items["0.2.2"]["symbolSize"]
    assert all(item["itemStyle"]["borderWidth"] < 4 for node_id, item in items.items() if node_id != "0.2.1")
    index = {node_id: i for i, node_id in enumerate(chart.node_ids)}
    links = series(chart)["links"]
    thick = {(link["source"], link["target"]) for link in links if link.get("lineStyle", {}).get("width") == 3}
    assert thick == {(index["0"], index["0.2"]), (index["0.2"], index["0.2.1"])}


def test_selected_node_gets_its_own_highlight() -> None:
    state = live()
    items = items_by_id(build_chart(state, selected="0.1"))
    amber = [node_id for node_id, item in items.items() if item["itemStyle"]["borderColor"] == AMBER]
    assert amber == ["0.1"]
    assert items["0.1"]["itemStyle"]["borderColor"] != items["0.2.1"]["itemStyle"]["borderColor"]
    assert all(item["itemStyle"]["borderColor"] != AMBER for item in items_by_id(build_chart(state)).values())


def _label_priority(item: dict[str, Any]) -> float:
    """How ECharts ranks a label when labels overlap (`hideOverlap`): the area of its symbol's box,
    border included; the larger keeps its label."""
    return float((item["symbolSize"] + item["itemStyle"]["borderWidth"]) ** 2)


def test_the_labels_an_operator_must_read_win_every_overlap(failed_run: SessionState) -> None:
    """At the plain sizes a failed action's label lost an overlap to a bigger "?" or OR beside it. The
    current node's label beats every other, the selected node's every other but the current one's, and
    a failed node's every ordinary one's."""
    state = live()
    apply_command(state, Inject(parent="0", goals=["check the price"]))
    for run in (state, failed_run):
        for selected in [None, *(node.id for node in run.tree.walk())]:
            items = items_by_id(build_chart(run, selected=selected, collapse_closed=False))
            rank = {node_id: _label_priority(item) for node_id, item in items.items()}
            current = {i for i, item in items.items() if item["label"].get("fontWeight") == "bold"}
            chosen = {selected} - current if selected in items else set()
            failed = {i for i, item in items.items() if "✗" in item["label"]["formatter"]} - current - chosen
            ordinary = set(items) - current - chosen - failed
            for better, worse in ((current, set(items) - current), (chosen, failed | ordinary), (failed, ordinary)):
                for b, w in itertools.product(better, worse):
                    assert rank[b] > rank[w], f"with {selected} selected, the label of {w} beats that of {b}"
            assert failed or run is state, "the failed run draws its failures"


def test_operator_and_repair_marks_and_alternative_scores(failed_run: SessionState) -> None:
    items = items_by_id(build_chart(failed_run, collapse_closed=False))
    labels = {node_id: item["label"]["formatter"] for node_id, item in items.items()}
    assert labels["0.4"].startswith("↻ ACT 0.4") and labels["0.5"].startswith("↻ ")
    assert "0.90" in labels["0.2.1"] and "0.60" in labels["0.2.2"]
    assert not labels["0.1"].startswith(("↻", "✎")) and "0.90" not in labels["0.1"]

    state = live()
    apply_command(state, Inject(parent="0.2", goals=["Open recipe D"], scores=[0.3]))
    items = items_by_id(build_chart(state))
    assert items["0.2.3"]["label"]["formatter"].startswith("✎ ? 0.2.3 · 0.30")
    assert items["0.2.3"]["itemStyle"]["borderColor"] != items["0.2.2"]["itemStyle"]["borderColor"]

    apply_command(state, Edit(node="0.3", description="Note the rating and the author"))
    edited = items_by_id(build_chart(state))["0.3"]
    assert edited["label"]["formatter"].startswith("✎ "), "an edited planner node is marked like an operator's"
    assert edited["itemStyle"]["borderColor"] == items["0.2.3"]["itemStyle"]["borderColor"]


def test_a_reopened_node_says_what_it_said_and_an_edited_action_keeps_the_one_it_replaced() -> None:
    """Issue 12, defect 12: a reopen marked a node ✎ though its text was unchanged, and an action edited
    in the approval box kept no trace of the action it replaced."""
    state = live()
    apply_command(state, Prune(node="0.3", reason="later"))
    apply_command(state, Reopen(node="0.3"))
    item = items_by_id(build_chart(state, collapse_closed=False))["0.3"]
    assert state.tree["0.3"].status is Status.UNVISITED and state.tree["0.3"].protected
    assert "✎" not in item["label"]["formatter"].split("\n")[0], item["label"]["formatter"]

    state = live(5)  # 0.2.1 expanded into its action, not run yet
    action = state.tree["0.2.1"]
    was = action.action
    assert action.type is NodeType.ACTION and action.status is not Status.SUCCESS and was, action
    apply_command(state, EditAction(node=action.id, action="click [33]"))
    assert (action.action, action.earlier_actions) == ("click [33]", (was,))
    assert items_by_id(build_chart(state))[action.id]["label"]["formatter"].startswith("✎ ")


def test_a_node_with_a_planned_action_is_marked_with_the_action_in_its_tooltip() -> None:
    state = live()
    unexpanded = next(n for n in state.tree.walk() if n.type is NodeType.UNKNOWN and n.status is Status.UNVISITED)
    state.proposals[unexpanded.id] = "click [7] <b>"
    items = items_by_id(build_chart(state, collapse_closed=False))
    assert items[unexpanded.id]["label"]["formatter"].split("\n")[0].endswith(" · ⇢")
    assert "planned ahead: <code>click [7] &lt;b&gt;</code>" in items[unexpanded.id]["tooltip"]["formatter"]
    others = [item for node_id, item in items.items() if node_id != unexpanded.id]
    assert not any("⇢" in item["label"]["formatter"] for item in others)


def test_hide_removed_drops_pruned_and_deleted_subtrees(failed_run: SessionState) -> None:
    chart = build_chart(failed_run, hide_removed=True, collapse_closed=False)
    # The failed OR and its two failed actions stay, though the engine pruned them: a failure is never
    # hidden; the deleted step is.
    assert chart.node_ids == ["0", "0.1", "0.2", "0.2.1", "0.2.2", "0.4", "0.5"]
    assert chart.hidden == 1 and chart.collapsed == {}
    shown = build_chart(failed_run, collapse_closed=False)
    assert "0.2.1" in shown.node_ids and shown.hidden == 0


def test_collapse_folds_closed_subtrees_but_never_the_selection(done_run: SessionState) -> None:
    chart = build_chart(done_run)
    assert chart.node_ids == ["0", "0.1", "0.2", "0.3"]
    assert chart.collapsed == {"0.2": 2} and chart.hidden == 2
    assert "+2" in items_by_id(chart)["0.2"]["label"]["formatter"]
    assert "+2" in items_by_id(chart)["0.2"]["tooltip"]["formatter"]

    opened = build_chart(done_run, selected="0.2.1")
    assert opened.node_ids == ["0", "0.1", "0.2", "0.2.1", "0.2.2", "0.3"] and opened.collapsed == {}
    assert build_chart(done_run, selected="0.2").collapsed == {}


def test_collapse_keeps_the_active_path_and_accounts_for_every_fold() -> None:
    state = synthetic(3, 3)
    path = [node.id for node, _ in active_path(state.tree)]
    assert len(path) == 4
    chart = build_chart(state)
    assert set(path) <= set(chart.node_ids)
    assert chart.collapsed["0.1"] == 12  # the first third of the plan is done and folded
    assert all(state.tree[node_id].status is Status.SUCCESS for node_id in chart.collapsed)
    assert sum(chart.collapsed.values()) == chart.hidden > 0
    assert set(chart.node_ids).isdisjoint(node.id for node in state.tree.descendants(state.tree["0.1"]))


def test_focus_shows_ancestors_siblings_and_subtree() -> None:
    state = synthetic(3, 3, done=0)
    chart = build_chart(state, focus="0.2.1")
    assert chart.node_ids == ["0", "0.2", "0.2.1", "0.2.1.1", "0.2.1.2", "0.2.1.3", "0.2.2", "0.2.3"]
    assert chart.collapsed == {"0.2.2": 3, "0.2.3": 3}
    assert chart.hidden == len(state.tree) - 8
    assert build_chart(state, focus="no-such-node").node_ids == build_chart(state).node_ids


def test_max_nodes_keeps_the_neighbourhood_of_path_and_selection(big: SessionState) -> None:
    path = [node.id for node, _ in active_path(big.tree)]
    selected = "0.2.5"  # far from the agent, inside the finished first half
    chart = build_chart(big, selected=selected, max_nodes=300)
    shown = set(chart.node_ids)
    assert len(chart.node_ids) <= 300
    assert set(path) <= shown
    assert {selected, "0.2", *big.tree[selected].children, *big.tree["0.2"].children} <= shown
    for node_id in path[1:]:
        assert set(big.tree[big.tree[node_id].parent].children) <= shown  # siblings of the path
    assert all(big.tree[node_id].parent in shown for node_id in chart.node_ids if node_id != ROOT_ID)
    assert chart.node_ids == [node.id for node in big.tree.walk() if node.id in shown]
    assert chart.hidden == len(big.tree) - len(shown)
    assert sum(chart.collapsed.values()) == chart.hidden
    assert "+" in items_by_id(chart)["0.1"]["label"]["formatter"]


def test_max_nodes_never_cuts_the_path_or_selection(big: SessionState) -> None:
    path = [node.id for node, _ in active_path(big.tree)]
    chart = build_chart(big, selected="0.2.5.3", max_nodes=2)
    assert set(chart.node_ids) == set(path) | {"0", "0.2", "0.2.5", "0.2.5.3"}
    with pytest.raises(ValueError):
        build_chart(big, max_nodes=0)


def test_option_is_plain_json(big: SessionState, failed_run: SessionState) -> None:
    for chart in (
        build_chart(big),
        build_chart(big, collapse_closed=False, max_nodes=10_000),
        build_chart(failed_run, selected="0.2", hide_removed=False),
        build_chart(SessionState()),
    ):
        text = json.dumps(chart.option, allow_nan=False)
        assert json.loads(text) == chart.option
        assert "function" not in text
    wide = series(build_chart(big))
    assert len(wide["center"]) == 2 and (wide["width"], wide["height"]) > (0, 0)  # a wide plan opens on the agent


@pytest.mark.parametrize("height", [360, 420, 560])
@pytest.mark.parametrize("width", [NARROWEST, 700, 1100])
def test_following_keeps_the_agent_and_the_way_down_to_it_in_view_whatever_is_selected(
    big: SessionState, width: int, height: int
) -> None:
    """Issue 27: the chart stayed on the selection (the root by default) while the agent worked off its
    right edge; zoomed in on the agent, the way down to it left the chart (a fork's root sat above its
    chart). Following, the agent's node and label are whole in the chart, and so is every node on the
    active path that fits above it in the chart's height: in a big tree, a row of 60, a chain of six
    levels and the brownie run, at every size the console draws."""
    for state in (big, fan(60), synthetic(1, 5, done=0), live()):
        path = [node.id for node, _ in active_path(state.tree)]
        elsewhere = next((node.id for node in state.tree.walk() if node.id not in path), None)
        option = build_chart(state, selected=elsewhere, follow=True, height=height).option
        drawn = drawn_at(option, width, height)
        assert in_view(option, path[-1], width, height), (path[-1], drawn[path[-1]])
        bottom = label_box(option, path[-1], drawn[path[-1]])[3]
        fits = [node_id for node_id in path if bottom - label_box(option, node_id, drawn[node_id])[1] <= height]
        shown = [node_id for node_id in path if 0 <= drawn[node_id][0] <= width and 0 <= drawn[node_id][1] <= height]
        assert len(fits) >= 2 and set(fits) <= set(shown), f"{fits} fit above {path[-1]}, {shown} are in view"


def test_not_following_the_chart_is_drawn_around_the_selection(big: SessionState) -> None:
    agent = [node.id for node, _ in active_path(big.tree)][-1]
    elsewhere = big.tree.children(big.tree[ROOT_ID])[0].id
    assert agent != elsewhere and not agent.startswith(elsewhere + ".")
    looking = build_chart(big, selected=elsewhere, height=420).option
    assert in_view(looking, elsewhere, NARROWEST, 420) and not in_view(looking, agent, 1100, 420)
    nothing = build_chart(big, height=420).option
    assert in_view(nothing, agent, NARROWEST, 420), "nothing selected: around the agent"


@pytest.mark.parametrize("count", [8, 20, 60])
def test_every_node_of_a_wide_fan_out_keeps_its_whole_label(count: int) -> None:
    """Issue 27: in a row of 20, ECharts hid two labels in three (`hideOverlap`) because the plan was
    fitted to the chart. Drawn one pixel per unit, two neighbouring labels never meet, whatever the
    chart's width, and each has a background the edges pass under instead of crossing its text."""
    state = fan(count)
    option = build_chart(state, height=560).option
    label = series(build_chart(state)).get("label", {})
    for width in (NARROWEST, 700):
        drawn = drawn_at(option, width, 560)
        boxes = sorted(label_box(option, child, drawn[child]) for child in state.tree[ROOT_ID].children)
        assert len(boxes) == count
        for one, other in itertools.pairwise(boxes):
            assert one[2] < other[0], f"in a chart {width} px wide, neighbouring labels overlap: {one} {other}"
    assert label["show"] and label["backgroundColor"] and label["color"], label


@pytest.mark.parametrize(("width", "height"), [(NARROWEST, 360), (700, 420), (700, 560)])
def test_a_plan_that_fits_is_centred_across_its_chart_and_starts_at_its_top(width: int, height: int) -> None:
    """Issue 27: a one-node plan sat below the middle of an empty chart, its label lower still (a fork's
    first event beside its parent's whole plan). The drawing, symbols and labels, is centred across and
    starts at the chart's top, where the eye comes from the toggles above it."""
    for state in (synthetic(0, 0), synthetic(1, 1, done=0), synthetic(2, 2, done=0)):
        option = build_chart(state, height=height).option
        drawn = drawn_at(option, width, height)
        boxes = [label_box(option, node_id, at) for node_id, at in drawn.items()]
        left, top = min(box[0] for box in boxes), min(box[1] for box in boxes)
        right, bottom = max(box[2] for box in boxes), max(box[3] for box in boxes)
        assert 0 <= top <= 40, (len(state.tree), top, bottom)  # labels sit under their symbols
        assert abs((left + right) / 2 - width / 2) <= 12, (len(state.tree), left, right)


def test_hovering_a_node_fades_nothing() -> None:
    """Issue 27: with `emphasis.focus: "adjacency"`, every node but the hovered one's neighbours faded
    for as long as the pointer rested on the tree."""
    emphasis = series(build_chart(live())).get("emphasis", {})
    assert emphasis.get("focus", "none") == "none", emphasis
    assert "blur" not in series(build_chart(live())), "nothing is drawn blurred"


HOSTILE = "<img src=x onerror=alert(1)> {b} {a|x} {@name} $& </div>"


def test_page_text_cannot_break_out_of_labels_or_tooltips() -> None:
    state = synthetic(2, 2, done=0)
    for node in state.tree.walk():
        node.description = HOSTILE
        node.reason = "<script>alert('reason')</script>"
    state.tree["0.2"].description = "{b} {a|x} {@name} <b>"
    leaf = state.tree["0.1.1"]
    leaf.action = 'type [3] [<svg onload=alert(1)>] "{c}"'
    chart = build_chart(state, collapse_closed=False)
    every = list(strings(chart.option))
    assert not [text for text in every if re.search(r"<(img|script|svg|div|/div)", text)]
    for item in series(chart)["data"]:
        label, tip = item["label"]["formatter"], item["tooltip"]["formatter"]
        assert not re.search(r"\{(?!\u2060)", label) and not re.search(r"(?<!\u2060)\}", label)
        assert "{" not in tip and "}" not in tip and "|" not in tip
        if item["id"] == "0.2":
            assert "{b}" not in label and label.split("\n")[1].replace("\u2060", "") == "{b} {a|x} {@name} ‹b›"
            assert "{b} {a|x} {@name} <b>" in html.unescape(tip)
            continue
        assert label.split("\n")[1].startswith("‹img src=x onerror=alert(1)")
        assert html.unescape(tip).count(HOSTILE) == 1  # shown as literal text, not markup
        assert "<script>alert('reason')</script>" in html.unescape(tip)
    leaf_tip = items_by_id(chart)["0.1.1"]["tooltip"]["formatter"]
    assert 'type [3] [<svg onload=alert(1)>] "{c}"' in html.unescape(leaf_tip)


def test_long_text_is_truncated() -> None:
    state = synthetic(1, 1, done=0)
    state.tree["0.1"].description = "x" * 500
    item = items_by_id(build_chart(state))["0.1"]
    assert len(item["label"]["formatter"].split("\n")[1]) == 28
    assert "x" * 200 not in item["tooltip"]["formatter"] and "x" * 150 in item["tooltip"]["formatter"]


def test_clicked_node_reads_a_node_click_only() -> None:
    ids = ["0", "0.1", "0.2"]

    def event(data_type: str, indices: list[int]) -> dict[str, Any]:
        group = {"series_index": 0, "series_id": SERIES_ID, "data_type": data_type, "data_indices": indices}
        return {"selection": {"selected": [group], "areas": []}}

    assert clicked_node(event("node", [2]), ids) == "0.2"
    assert clicked_node(event("edge", [1]), ids) is None
    assert clicked_node(event("node", [3]), ids) is None
    assert clicked_node({"selection": {"selected": [], "areas": []}}, ids) is None
    assert clicked_node(None, ids) is None


def test_legend_names_every_shape_and_marker() -> None:
    legend = legend_markdown()
    for word in ("AND", "OR", "ACT", "?", "✎", "↻", "+N", "amber", "dashed", "active path"):
        assert word in legend
    assert "<" not in legend


def test_the_chart_never_animates_so_a_live_plan_stands_still_under_the_pointer() -> None:
    state, _, _ = run_script(load("brownie.json"), BROWNIE_TASK)
    assert build_chart(state).option["animation"] is False
