"""The selected node's action bar and the forms it opens, headless (streamlit.testing AppTest) on dry scripted
sessions run by the console's own runner: what the runner does after each press, and what the page says.

Edit… runs the node as its new text says, and "Expand it again" on the root re-plans it; the Plan changes
view lists both edits and the engine's re-expansion with their diffs, and a change's button selects its
node. Prune, Reopen, Inject after a node, Undo and Break here from the bar; a failed action's page text,
and Reopen runs it again; Force… runs the chosen alternative and never the other; a subtree saved as a
template with a parameter is injected under another node with a new value.

The real-Chromium twin, tests/test_console_node_actions_e2e.py, keeps what only a browser shows: a node
picked by a click on the chart, the bar above the fold, the opened form drawn first, the disabled
button's tooltip and the B key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import load
from console_helpers import (
    answered,
    caught_up,
    expanded,
    keyed,
    node_picker,
    redraw_until,
    settled,
    show_tab,
    step,
)
from streamlit.testing.v1 import AppTest

from planner.config import Breakpoint, EngineConfig
from planner.diff import edit_diffs
from planner.events import ActionExecuted, Kind
from planner.frames import Frame, next_position
from planner.models.scripted import Script
from planner.state import RunStatus
from planner.tree import NodeType, Origin, Status, TemplateRef
from sessions.store import EventStore
from sessions.store.reading import load_state

# -- helpers ----------------------------------------------------------------------------------------------


def description_field(at: AppTest) -> Any:
    """The Edit form's description field: its key carries a digest of the description it was drawn with."""
    [field] = [area for area in at.text_area if (area.key or "").startswith("edit_description_")]
    return field


def pick(at: AppTest, node_id: str) -> None:
    node_picker(at).select(node_id)
    at.run()
    assert not at.exception, at.exception


def bar(at: AppTest) -> dict[str, Any]:
    """The action bar's buttons (and every other keyed button), by key."""
    return {button.key: button for button in at.button if button.key}


def ran(store: EventStore, session_id: str, node_id: str) -> list[ActionExecuted]:
    """The node's actions the environment carried out, in order."""
    return [e.payload for e in store.load(session_id) if isinstance(e.payload, ActionExecuted) and e.node_id == node_id]


def run_to_the_end(at: AppTest, store: EventStore, session_id: str) -> None:
    at.button(key="ctl_resume").click().run()
    settled(at, lambda: load_state(store, session_id).finished, "the run to end")


def scripted(tmp_path: Path, script: dict[str, Any]) -> str:
    """A model spec for `script`, written to a file of the test's own."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(Script.model_validate(script).model_dump(mode="json")))
    return f"script:{path}"


def plan_changes(at: AppTest) -> list[str]:
    """The Plan changes view's Markdown (each change's heading, then its diff lines)."""
    show_tab(at, "Plan changes")
    return [m.value for m in at.markdown]


# -- Edit… -----------------------------------------------------------------------------------------------

SHOP = "Find the cheapest espresso machine in the shop and note its name and price"
REPLAN = "sort by price low to high, then open the first result, then note the name and price"
SHOP_SCRIPT = {
    "nodes": {
        SHOP: {"type": "AND", "children": ["search for espresso", "sort by rating", "note the name and price"]},
        "search for espresso": {"type": "ACTION", "action": "type [3] [espresso] [1]"},
        "sort by rating": {"type": "ACTION", "action": "click [8]"},
        "sort by price, cheapest first": {"type": "ACTION", "action": "click [7]"},
        "note the name and price": {"type": "ACTION", "action": "note [Barista One, $89]"},
        REPLAN: {
            "type": "AND",
            "children": ["sort by price low to high", "open the first result", "note the name and price"],
        },
        "sort by price low to high": {"type": "ACTION", "action": "click [7]"},
        "open the first result": {"type": "ACTION", "action": "click [20]"},
    },
    "final_answer": "Barista One, $89",
}


def test_an_edit_runs_as_its_new_text_says_and_expand_again_replans_both_listed_in_plan_changes(
    app_store: EventStore, tmp_path: Path
) -> None:
    session_id, at = expanded(app_store, SHOP, scripted(tmp_path, SHOP_SCRIPT))
    for steps in (3, 4):  # 0.1's expansion, then its action
        step(at, app_store, session_id, steps)
    assert ran(app_store, session_id, "0.1") and not ran(app_store, session_id, "0.2")
    pick(at, "0.2")
    at.button(key="open_edit").click().run()
    assert at.session_state["panel"] == "Edit plan", "Edit… opened the Edit plan tab"
    described = description_field(at)
    assert described.value == "sort by rating"
    described.input("sort by price, cheapest first")
    at.form_submit_button(key="edit_submit").click().run()
    answered(at, "description edit applied")
    assert load_state(app_store, session_id).tree["0.2"].description == "sort by price, cheapest first"
    for steps in (5, 6, 7):  # its expansion from the new text (unless planned ahead), then its action
        if ran(app_store, session_id, "0.2"):
            break
        step(at, app_store, session_id, steps)
    [sort] = ran(app_store, session_id, "0.2")
    assert sort.ok and sort.action == "click [7]", f"the edited step ran as its new text says: {sort.action}"

    pick(at, "0")
    at.button(key="open_edit").click().run()
    described = description_field(at)
    assert described.value == SHOP
    described.input(REPLAN)
    keyed(at.checkbox, "edit_reexpand").check()
    at.form_submit_button(key="edit_submit").click().run()
    answered(at, "description edit applied")
    tree = load_state(app_store, session_id).tree
    assert [tree[i].status for i in ("0.1", "0.2", "0.3")] == [Status.SUCCESS, Status.SUCCESS, Status.PRUNED]
    step(at, app_store, session_id, load_state(app_store, session_id).steps + 1)  # the engine expands the root again
    tree = load_state(app_store, session_id).tree
    new = [tree[i] for i in tree["0"].children[3:]]
    assert [n.description for n in new] == [
        "sort by price low to high",
        "open the first result",
        "note the name and price",
    ]

    diffs = edit_diffs(app_store.load(session_id))
    assert [(d.by, d.node) for d in diffs] == [("edit", "0.2"), ("edit", "0"), ("re-expansion", "0")]
    shown = plan_changes(at)
    for heading in (
        f"**Event {diffs[0].seq}** · operator: edit at 0.2",
        f"**Event {diffs[1].seq}** · operator: edit at 0",
        f"**Event {diffs[2].seq}** · engine: re-expansion of 0",
    ):
        assert heading in shown, (heading, shown)
    text = "\n".join(shown)
    assert "changed 0.2 · description “sort by rating” → “sort by price, cheapest first”" in text, text
    assert "removed 0.3 · note the name and price (UNVISITED → PRUNED)" in text, text
    assert f"added {new[0].id} · sort by price low to high" in text, text
    at.button(key=f"plan_change_select_{diffs[0].seq}").click().run()
    assert node_picker(at).value == "0.2", "a change's node is one click away"

    run_to_the_end(at, app_store, session_id)
    state = load_state(app_store, session_id)
    assert state.status is RunStatus.SUCCEEDED, (state.status, state.reason)
    assert all(ran(app_store, session_id, n.id) for n in new), "the new plan's steps ran"
    assert not ran(app_store, session_id, "0.3"), "the pruned step never ran"
    assert state.final_answer == "Barista One, $89"


# -- Prune, Reopen, Inject after, Undo and Break here -------------------------------------------------------


def test_prune_reopen_inject_after_and_undo_from_the_bar(app_store: EventStore) -> None:
    session_id, at = expanded(app_store)
    pick(at, "0.2")
    buttons = bar(at)
    assert buttons["reopen_btn"].disabled and buttons["reopen_btn"].label == "Reopen 0.2", "nothing to reopen yet"
    assert buttons["reopen_btn"].help == "only a failed, pruned or deleted node can be reopened; 0.2 is UNVISITED"

    at.button(key="open_prune").click().run()
    assert at.session_state["panel"] == "Edit plan", "Prune… opened the Edit plan tab"
    keyed(at.text_input, "prune_reason").input("the first recipe is enough")
    at.form_submit_button(key="prune_submit").click().run()
    answered(at, "prune applied")
    assert load_state(app_store, session_id).tree["0.2"].status is Status.PRUNED
    redraw_until(at, lambda _: not bar(at)["reopen_btn"].disabled, "Reopen enabled on the pruned node")
    buttons = bar(at)
    assert buttons["open_edit"].disabled and buttons["open_edit"].help == "0.2 is PRUNED: reopen it before editing"
    assert buttons["breakpoint_btn"].disabled, "nor can the run break there"
    assert buttons["breakpoint_btn"].help == "a finished node (PRUNED): reopen 0.2 first"
    assert buttons["open_prune"].disabled and buttons["open_prune"].help == "0.2 is already PRUNED"
    assert not buttons["open_inject"].disabled, "beside the pruned node, under its parent, is still open"
    at.button(key="open_inject").click().run()
    assert keyed(at.radio, "inject_where").options == ["before 0.2", "after 0.2"], "not under a pruned node (issue 27)"

    at.button(key="reopen_btn").click().run()
    answered(at, "reopen applied")
    assert load_state(app_store, session_id).tree["0.2"].status is Status.UNVISITED
    redraw_until(at, lambda _: not bar(at)["open_edit"].disabled, "Edit… enabled again")

    at.button(key="open_inject").click().run()
    keyed(at.text_area, "inject_goals").input("check the rating is out of 5")
    keyed(at.radio, "inject_where").set_value("after")
    at.form_submit_button(key="inject_submit").click().run()
    answered(at, "inject applied")
    tree = load_state(app_store, session_id).tree
    injected = [n for n in tree.walk() if n.origin is Origin.OPERATOR]
    assert [(n.parent, n.description) for n in injected] == [("0", "check the rating is out of 5")]
    assert tree["0"].children == ["0.1", "0.2", injected[0].id, "0.3"], "right after the selected node"

    redraw_until(at, lambda _: not bar(at)["undo_bar_btn"].disabled, "Undo enabled: the injected node has not run")
    at.button(key="undo_bar_btn").click().run()
    answered(at, "undo applied")
    state = load_state(app_store, session_id)
    assert state.tree[injected[0].id].status is Status.DELETED
    assert state.tree[injected[0].id].reason == "undone by operator"
    assert state.tree["0"].children[:2] == ["0.1", "0.2"] and state.tree["0.2"].status is Status.UNVISITED


def test_an_inject_shows_its_diff_under_the_forms_and_undo_takes_it_back(app_store: EventStore) -> None:
    """The last edit's diff is text: the sub-goal's tags reach the page escaped, never as HTML."""
    session_id, at = expanded(app_store)
    keyed(at.text_area, "inject_goals").input("check the <b>rating</b> first")
    at.form_submit_button(key="inject_submit").click().run()
    answered(at, "inject applied")
    [node_id] = [n.id for n in load_state(app_store, session_id).tree.walk() if n.origin is Origin.OPERATOR]
    redraw_until(at, lambda _: not at.button(key="undo_btn").disabled, "the last edit's Undo enabled")
    edit = load_state(app_store, session_id).edits[-1].seq
    assert f"**Last edit**: inject at 0 (event {edit})" in [m.value for m in at.markdown]
    assert rf"added {node_id} · check the \<b\>rating\</b\> first" in [m.value for m in at.markdown]

    at.button(key="undo_btn").click().run()
    redraw_until(at, lambda _: "No plan edit to undo." in [c.value for c in at.caption], "the last edit box emptied")
    state = load_state(app_store, session_id)
    assert state.tree[node_id].status is Status.DELETED and state.tree[node_id].reason == "undone by operator"
    assert state.edits == []
    assert not [m.value for m in at.markdown if f"added {node_id}" in m.value]
    assert at.button(key="undo_btn").disabled, "nothing left to undo"
    assert at.button(key="undo_btn").help == "nothing to undo: no plan edit of yours is left to take back"


def chart_label(at: AppTest, node_id: str) -> str:
    """The first line of `node_id`'s label in the live chart (its marks, type and id)."""
    [chart] = [json.loads(e.proto.spec) for e in at.get("echarts_chart") if e.proto.alt.startswith("Plan tree of ")]
    [item] = [item for item in chart["series"][0]["data"] if item["id"] == node_id]
    return item["label"]["formatter"].split("\n")[0]


def test_break_here_from_the_bar_pauses_the_run_as_it_is_about_to_enter_that_node(app_store: EventStore) -> None:
    session_id, at = expanded(app_store)
    pick(at, "0.2")
    assert at.button(key="breakpoint_btn").label == "Break here (0.2)"
    at.button(key="breakpoint_btn").click().run()
    answered(at, "node breakpoint applied")
    assert load_state(app_store, session_id).config.node_breakpoints == {"0.2"}
    redraw_until(at, lambda _: at.button(key="breakpoint_btn").label == "Remove breakpoint (0.2)", "the button to turn")
    assert chart_label(at, "0.2").startswith("⏸ "), "marked ⏸ in the tree"

    at.button(key="ctl_resume").click().run()
    reason = "breakpoint: at 0.2 (set by operator)"
    settled(
        at,
        lambda: (state := load_state(app_store, session_id)).status is RunStatus.PAUSED and state.reason == reason,
        "the pause at 0.2's breakpoint",
    )
    state = load_state(app_store, session_id)
    position = next_position(state.tree)
    assert position is not None and (position.node.id, position.frame) == ("0.2", Frame.ENTERING)
    assert state.tree["0.1"].status is Status.SUCCESS, "the sub-goal before it ran"
    assert state.tree["0.2"].status is Status.UNVISITED and state.tree["0.2"].type is NodeType.UNKNOWN
    redraw_until(at, lambda _: any(reason in m.value for m in at.markdown), "the status line to give the reason")


# -- a failed action: its page text, and Reopen -----------------------------------------------------------

FILTER = "In the Headphones category, list the headphones under $100 and note the cheapest"
FILTER_SCRIPT = {
    "nodes": {
        FILTER: {
            "type": "AND",
            "children": ["open the Headphones category", "click Apply filters", "note the cheapest"],
        },
        "open the Headphones category": {"type": "ACTION", "action": "click [4]"},
        "click Apply filters": {"type": "ACTION", "action": "click [53]"},
        "note the cheapest": {"type": "ACTION", "action": "note [Pulse Over-Ear, $79]"},
    },
    "fail_actions": ["click [53]"],
}


def failed_and_paused(store: EventStore, session_id: str, times: int) -> bool:
    """Whether the run has paused at a breakpoint after `times` failed actions."""
    state = load_state(store, session_id)
    failed = [e for e in store.load(session_id) if isinstance(e.payload, ActionExecuted) and not e.payload.ok]
    return len(failed) == times and state.status is RunStatus.PAUSED and (state.reason or "").startswith("breakpoint:")


def test_a_failed_action_shows_the_page_the_agent_read_and_reopen_runs_it_again(
    app_store: EventStore, tmp_path: Path
) -> None:
    """A breakpoint on failure stops the run at the failed click; the Node tab shows the page text the agent
    read after it, Task & answer the current page's; Reopen from the bar, then Resume, and the same click
    runs again (and fails again, the page being what it is)."""
    config = EngineConfig(breakpoints=frozenset({Breakpoint.ON_FAILURE}))
    session_id, at = expanded(app_store, FILTER, scripted(tmp_path, FILTER_SCRIPT), config)
    at.button(key="ctl_resume").click().run()
    settled(at, lambda: failed_and_paused(app_store, session_id, 1), "the pause at the first failed action")
    caught_up(at, app_store, session_id)
    [failed] = [n for n in load_state(app_store, session_id).tree.walk() if n.status is Status.FAIL]
    assert (failed.id, failed.description) == ("0.2", "click Apply filters"), failed
    [first] = ran(app_store, session_id, "0.2")
    assert first.observation, "the failed click's page was observed"

    pick(at, "0.2")
    [closed] = [e for e in at.expander if e.label.startswith("Page text the agent read")]
    assert closed.label == f"Page text the agent read ({len(first.observation):,} characters)"
    assert first.observation not in [t.value for t in at.text], "a closed page text is not built"
    at.session_state["page_text_0.2"] = True
    at.run()
    assert first.observation in [t.value for t in at.text], "the page text the agent read after the click"
    show_tab(at, "Task & answer")
    page_text = load_state(app_store, session_id).page_text
    assert page_text
    at.session_state["current_page_text"] = True
    at.run()
    assert page_text in [t.value for t in at.text], "the current page's text"

    reopen = at.button(key="reopen_btn")
    assert reopen.label == "Reopen 0.2" and not reopen.disabled, "a failed node can be reopened"
    reopen.click().run()
    answered(at, "reopen applied")
    assert load_state(app_store, session_id).tree["0.2"].status is Status.UNVISITED

    at.button(key="ctl_resume").click().run()
    settled(at, lambda: failed_and_paused(app_store, session_id, 2), "the reopened action to run and fail again")
    events = app_store.load(session_id)
    [reset] = [e.seq for e in events if e.kind is Kind.NODE_RESET and e.node_id == "0.2"]
    first_seq, again_seq = [e.seq for e in events if isinstance(e.payload, ActionExecuted) and e.node_id == "0.2"]
    first, again = ran(app_store, session_id, "0.2")
    assert first_seq < reset < again_seq and first.action == again.action == "click [53]", "the same click, again"


# -- Force… ------------------------------------------------------------------------------------------------


def test_force_an_or_alternative_from_the_bar_and_only_it_runs(app_store: EventStore) -> None:
    session_id, at = expanded(app_store)
    steps = 2
    while (tree := load_state(app_store, session_id).tree)["0.2"].type is not NodeType.OR:
        assert steps < 8, f"0.2 never expanded into alternatives: {tree['0.2']}"
        steps += 1
        step(at, app_store, session_id, steps)
    assert tree["0.2"].children == ["0.2.1", "0.2.2"]
    assert (tree["0.2.1"].score, tree["0.2.2"].score) == (0.9, 0.6), "the model prefers 0.2.1"
    pick(at, "0.2")
    at.button(key="open_force").click().run()
    assert at.session_state["panel"] == "Edit plan", "Force… opened the Edit plan tab"
    keyed(at.selectbox, "force_child").select("0.2.2")
    at.form_submit_button(key="force_submit").click().run()
    answered(at, "force applied")
    assert load_state(app_store, session_id).tree["0.2"].forced == "0.2.2"

    [forced] = [d for d in edit_diffs(app_store.load(session_id)) if d.by == "force"]
    shown = plan_changes(at)
    assert f"**Event {forced.seq}** · operator: force at 0.2" in shown, shown
    assert "changed 0.2 · forced alternative none → “0.2.2”" in shown, shown

    run_to_the_end(at, app_store, session_id)
    state = load_state(app_store, session_id)
    assert state.status is RunStatus.SUCCEEDED, (state.status, state.reason)
    assert state.final_answer == load("brownie.json").final_answer
    assert state.tree["0.2.2"].status is Status.SUCCESS and ran(app_store, session_id, "0.2.2"), "the forced one ran"
    assert state.tree["0.2.1"].status is Status.UNVISITED and not ran(app_store, session_id, "0.2.1"), (
        "the alternative the model scored higher never ran"
    )


# -- templates ---------------------------------------------------------------------------------------------


def test_a_subtree_saved_as_a_template_with_a_param_is_injected_with_a_new_value(app_store: EventStore) -> None:
    session_id, at = expanded(app_store)
    tree = load_state(app_store, session_id).tree
    plan = [node.description for node in tree.children(tree["0"])]
    assert plan[0] == "Search for vegan chocolate brownie", plan

    keyed(at.text_input, "tpl_name").input("find_recipe")
    keyed(at.text_area, "tpl_params").input("dish=vegan chocolate brownie")
    keyed(at.checkbox, "tpl_children").check()
    at.form_submit_button(key="template_save_submit").click().run()
    assert "saved as find_recipe v1 (dish): 3 nodes" in [s.value for s in at.success]

    pick(at, "0.1")
    choice = keyed(at.selectbox, "template_choice")
    assert choice.value == "find_recipe" and choice.format_func(choice.value) == "find_recipe v1 (dish): 3 nodes"
    keyed(at.text_input, "template_param_find_recipe_dish").input("chocolate cake")
    meaning = keyed(at.radio, "tpl_meaning")
    assert meaning.value == "its first steps: the planner plans the rest", "the inject form's default, here too"
    meaning.set_value("its only steps (AND): the planner adds none")
    at.button(key="template_inject_submit").click().run()
    answered(at, "inject applied")
    tree = load_state(app_store, session_id).tree
    added = tree.children(tree["0.1"])
    assert tree["0.1"].type is NodeType.AND
    assert [node.description for node in added] == ["Search for chocolate cake", *plan[1:]]
    assert {node.template for node in added} == {TemplateRef("find_recipe", 1)}

    pick(at, "0.1.1")
    [heading] = [m.value for m in at.markdown if m.value.startswith("**0.1.1** · ")]
    assert heading.endswith(" · from template find_recipe v1"), f"the inspector names the template: {heading}"
