"""The selected node's action bar and the Plan changes view, from the real console in headless Chromium
(issue 12, "act on the tree itself" and "before/after of every edit"; issue 14, every intervention kind
end to end).

Right under the node selector, whichever tab is open, the bar holds the node's one-click actions
(Break here, Reopen, Undo last edit) and the buttons that open the Edit plan tab on a form (Prune…,
Inject…, Edit…, Force…). Each test presses them as an operator does, on a paused demo run stepped by
hand, and checks the store as well as the screen; an edited, reopened or forced run then goes on, and
the test checks what ran in the browser afterwards. The Plan changes view lists every change to the
plan, the operator's and the engine's, each with its diff.
"""

from __future__ import annotations

import re

import pytest
from console_helpers import (
    NODE_PICKER,
    TASKS,
    box_of,
    choose,
    click_node,
    control,
    only,
    open_console,
    open_tab,
    start_demo,
    state_of,
    step_once,
    store_of,
    wait_for_the_end,
    wait_until,
)
from playwright.sync_api import Locator, Page, expect
from test_console_shortcuts_e2e import button, press

from demo.tasks import check_answer
from planner.config import Breakpoint
from planner.diff import edit_diffs
from planner.events import Event, Kind
from planner.state import RunStatus
from planner.tree import NodeType, Status
from sessions.client.commands import queue_command
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def bar_button(page: Page, name: str) -> Locator:
    """The action bar's button `name`, once there is one (a redraw's old bar may linger a moment)."""
    found = page.locator(".st-key-node_actions").get_by_role("button", name=name)
    expect(found, f"one {name!r} button in the action bar").to_have_count(1, timeout=30_000)
    return found


def open_form(page: Page, name: str) -> None:
    """Press a bar button that needs input: the Edit plan tab opens by itself."""
    bar_button(page, name).click()
    expect(page.get_by_role("tab", name="Edit plan"), f"{name} opened the Edit plan tab").to_have_attribute(
        "aria-selected", "true", timeout=30_000
    )


def top(locator: Locator) -> float:
    """Where `locator` starts down the page, once it is laid out (a redraw can hide it for a moment)."""
    return box_of(locator, str(locator))["y"]


def drawn_first(page: Page, field: Locator, node_id: str) -> None:
    """Wait until the form of `field` is drawn above the prune form, where the bar's press puts it
    (the redraw after the press may not have reached the page yet)."""
    prune = page.get_by_label(f"Prune {node_id}: reason")
    wait_until(lambda: top(field) < top(prune), 30, "the form the bar opened drawn first")


def _ran(console: ConsoleProcess, session_id: str, node_id: str) -> list[Event]:
    """The node's actions carried out in the browser, in order."""
    events = store_of(console).load(session_id)
    return [e for e in events if e.kind is Kind.ACTION_EXECUTED and e.node_id == node_id]


def change(page: Page, seq: int) -> Locator:
    """One change in the Plan changes view, by the event that completed it."""
    found = page.locator(f".st-key-plan_change_{seq}")
    expect(found, f"the change of event {seq} listed").to_have_count(1, timeout=30_000)
    return found


def test_edit_a_description_run_it_then_expand_again_and_see_both_in_plan_changes(
    page: Page, console: ConsoleProcess
) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "cheapest-espresso", paused=True)
    step_once(page, console, session_id)  # 0.1's expansion
    step_once(page, console, session_id)  # 0.1's action: the root's re-expansion below pauses for no plan review
    page.set_viewport_size({"width": 1600, "height": 1000})
    click_node(page, "0.2")
    expect(page.get_by_role("tab", name="Node")).to_have_attribute("aria-selected", "true")
    edit = bar_button(page, "Edit…")
    box = edit.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1000, f"the bar is below the fold at 1600×1000: {box}"

    open_form(page, "Edit…")
    described = only(page, '[class*="st-key-edit_description_"] textarea')
    drawn_first(page, described, "0.2")
    described.fill("sort by price, cheapest first")
    page.locator(".st-key-edit_submit button").click()
    expect(page.get_by_text("description edit applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree["0.2"].description == "sort by price, cheapest first"
    for _ in range(3):  # its expansion from the new text, then its action
        if _ran(console, session_id, "0.2"):
            break
        step_once(page, console, session_id)
    [sort_click] = _ran(console, session_id, "0.2")
    assert sort_click.data["ok"] and "sort=price_asc" in sort_click.data["url"], (
        "the edited step ran in the browser as its new text says: the price sort, cheapest first"
    )

    expect(page.locator("svg text").filter(has_text=re.compile(r"^AND 0$")), "the root drawn again").to_be_visible(
        timeout=30_000
    )
    click_node(page, "0")
    open_form(page, "Edit…")
    described = only(page, '[class*="st-key-edit_description_"] textarea')
    expect(described).to_have_value(re.compile(r"^Search the shop"), timeout=30_000)
    described.fill("sort by price low to high, then open the first result, then note the name and price")
    only(page, '[class*="st-key-edit_reexpand-"]').get_by_text("Expand it again").click()
    page.locator(".st-key-edit_submit button").click()
    expect(page.get_by_text("description edit applied")).to_be_visible(timeout=15_000)
    tree = state_of(console, session_id).tree
    assert [tree[i].status for i in ("0.1", "0.2", "0.3", "0.4")] == [Status.SUCCESS] * 2 + [Status.PRUNED] * 2
    step_once(page, console, session_id)  # the engine expands the root again
    tree = state_of(console, session_id).tree
    new = [tree[i] for i in tree["0"].children[4:]]
    assert [n.description for n in new] == [
        "sort by price low to high",
        "open the first result",
        "note the name and price",
    ]

    diffs = edit_diffs(store_of(console).load(session_id))
    assert [(d.by, d.node) for d in diffs] == [("edit", "0.2"), ("edit", "0"), ("re-expansion", "0")]
    open_tab(page, "Plan changes")
    first, second, again = (change(page, d.seq) for d in diffs)
    expect(first).to_contain_text(f"Event {diffs[0].seq} · operator: edit at 0.2", timeout=30_000)
    expect(first).to_contain_text(
        "changed 0.2 · description “sort by price low to high” → “sort by price, cheapest first”"
    )
    expect(second).to_contain_text("operator: edit at 0")
    expect(second).to_contain_text("removed 0.3 · open the first result (UNVISITED → PRUNED)")
    expect(again).to_contain_text(f"Event {diffs[2].seq} · engine: re-expansion of 0")
    expect(again).to_contain_text(f"added {new[0].id} · sort by price low to high")

    first.get_by_role("button", name="Select 0.2").click()  # a change's node is one click away
    expect(page.locator(NODE_PICKER), "0.2 selected from its change").to_have_value(
        re.compile(r"^0\.2 · "), timeout=30_000
    )

    control(page, console, "resume")
    wait_for_the_end(page, console, session_id, 120, "the run to end after the root's new plan")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED, (state.status, state.reason)
    assert all(_ran(console, session_id, n.id) for n in new), "the new plan's steps ran in the browser"
    assert check_answer(TASKS["cheapest-espresso"], state.final_answer).passed, state.final_answer


def test_prune_reopen_inject_undo_and_break_here_from_the_bar(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "cheapest-espresso", paused=True)
    click_node(page, "0.3")
    expect(bar_button(page, "Reopen 0.3"), "nothing to reopen yet").to_be_disabled()

    open_form(page, "Prune…")
    page.get_by_label("Prune 0.3: reason").fill("the first result is enough")
    page.locator(".st-key-prune_submit button").click()
    expect(page.get_by_text("prune applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree["0.3"].status is Status.PRUNED
    expect(bar_button(page, "Edit…"), "a pruned node cannot be edited").to_be_disabled(timeout=30_000)
    expect(bar_button(page, "Break here (0.3)"), "nor can the run break there").to_be_disabled()
    bar_button(page, "Edit…").hover()
    expect(page.get_by_text("0.3 is PRUNED: reopen it before editing"), "the disabled button says why").to_be_visible(
        timeout=30_000
    )

    reopen = bar_button(page, "Reopen 0.3")
    expect(reopen, "a pruned node can be reopened").to_be_enabled(timeout=30_000)
    reopen.click()
    expect(page.get_by_text("reopen applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree["0.3"].status is Status.UNVISITED

    open_form(page, "Inject…")
    goals = only(page, '[class*="st-key-inject_goals-"] textarea')
    drawn_first(page, goals, "0.3")
    goals.fill("check the price is in euros")
    only(page, '[class*="st-key-inject_where-"]').get_by_text("after 0.3", exact=True).click()
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    tree = state_of(console, session_id).tree
    injected = tree["0"].children[3]
    assert tree["0"].children[2] == "0.3" and tree[injected].description == "check the price is in euros"

    undo = bar_button(page, "Undo last edit")
    expect(undo, "the inject can be taken back: its node has not run").to_be_enabled(timeout=30_000)
    undo.click()
    expect(page.get_by_text("undo applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree[injected].status is Status.DELETED

    press(page, "breakpoint", button(page, "breakpoint_btn"))  # B, with the focus on no field
    wait_until(lambda: state_of(console, session_id).config.node_breakpoints == {"0.3"}, 60, "the breakpoint by B")
    expect(bar_button(page, "Remove breakpoint (0.3)"), "the bar now takes it away").to_be_enabled(timeout=30_000)


def test_reopen_a_failed_action_from_the_bar_and_it_runs_again(page: Page, console: ConsoleProcess) -> None:
    """The shop's price filter answers HTTP 500 (demo/README.md), so the filter's Apply click fails; the
    operator reads the page the agent got, reopens the click and resumes: it runs in the browser again
    (and fails again, the shop being what it is). A breakpoint on failure, set through the store as
    the run's setting, stops the run at each failure."""
    open_console(page, console)
    session_id = start_demo(page, console, "over-ear-under-100", paused=True)
    queue_command(store_of(console), session_id, {"kind": "breakpoints", "breakpoints": [Breakpoint.ON_FAILURE]})
    control(page, console, "resume")
    wait_until(lambda: _failed_and_paused(console, session_id, 1), 90, "the pause at the first failed action")
    [failed] = [n for n in state_of(console, session_id).tree.walk() if n.status is Status.FAIL]
    assert failed.description == "click Apply filters", failed

    click_node(page, failed.id)
    open_tab(page, "Node")
    seen = only(page, f".st-key-page_text_{failed.id.replace('.', '-')}")  # a key's class has - for each dot
    seen.get_by_text("Page text the agent read").click()
    expect(seen, "the error page as the agent read it").to_contain_text("# Something went wrong", timeout=30_000)
    expect(seen, "the page's own words, which the console shows nowhere else").to_contain_text(
        "The price filter is temporarily unavailable."
    )
    open_tab(page, "Task & answer")
    current = only(page, ".st-key-current_page_text")  # what a simulated operator's page rules match
    current.get_by_text("Page text the agent read").click()
    expect(current, "the current page's text").to_contain_text("The price filter is temporarily unavailable.")
    reopen = bar_button(page, f"Reopen {failed.id}")
    expect(reopen, "a failed node can be reopened").to_be_enabled(timeout=30_000)
    reopen.click()
    expect(page.get_by_text("reopen applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree[failed.id].status is Status.UNVISITED

    control(page, console, "resume")
    wait_until(lambda: _failed_and_paused(console, session_id, 2), 90, "the reopened action to run and fail again")
    events = store_of(console).load(session_id)
    [reset] = [e.seq for e in events if e.kind is Kind.NODE_RESET and e.node_id == failed.id]
    first, again = _ran(console, session_id, failed.id)
    assert first.seq < reset < again.seq and first.data["action"] == again.data["action"], "the same click, again"


def _failed_and_paused(console: ConsoleProcess, session_id: str, times: int) -> bool:
    """Whether the run has paused at a breakpoint after `times` failed actions in the browser."""
    state = state_of(console, session_id)
    failed = [e for e in store_of(console).load(session_id) if e.kind is Kind.ACTION_EXECUTED and not e.data["ok"]]
    return len(failed) == times and state.status is RunStatus.PAUSED and (state.reason or "").startswith("breakpoint:")


def test_force_an_or_alternative_from_the_bar_and_run_it_to_the_end(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "over-ear-under-100", paused=True)
    for _ in range(4):  # the category's action, then 0.2's expansion into alternatives
        if "0.2" in (tree := state_of(console, session_id).tree) and tree["0.2"].type is NodeType.OR:
            break
        step_once(page, console, session_id)
    tree = state_of(console, session_id).tree
    assert tree["0.2"].type is NodeType.OR and tree["0.2"].children == ["0.2.1", "0.2.2"], tree["0.2"]
    click_node(page, "0.2")
    open_form(page, "Force…")
    box = only(page, '[class*="st-key-force_child-"] input')
    drawn_first(page, box, "0.2")
    choose(page, box, "0.2.2", re.compile(r"^0\.2\.2 · sort by price low to high"))
    page.locator(".st-key-force_submit button").click()
    expect(page.get_by_text("force applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree["0.2"].forced == "0.2.2"

    [forced] = [d for d in edit_diffs(store_of(console).load(session_id)) if d.by == "force"]
    open_tab(page, "Plan changes")
    expect(change(page, forced.seq)).to_contain_text("operator: force at 0.2", timeout=30_000)
    expect(change(page, forced.seq)).to_contain_text("changed 0.2 · forced alternative none → “0.2.2”")

    control(page, console, "resume")
    wait_for_the_end(page, console, session_id, 120, "the run to end after the forced alternative")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED, (state.status, state.reason)
    assert check_answer(TASKS["over-ear-under-100"], state.final_answer).passed, state.final_answer
    assert state.tree["0.2.2"].status is Status.SUCCESS and _ran(console, session_id, "0.2.2"), "the forced one ran"
    events = store_of(console).load(session_id)
    assert state.tree["0.2.1"].status is Status.UNVISITED and not any(
        e.kind is Kind.ACTION_EXECUTED and (e.node_id or "").startswith("0.2.1") for e in events
    ), "the alternative with the broken price filter never ran"
