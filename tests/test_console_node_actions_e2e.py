"""The selected node's action bar in the real console in headless Chromium (issue 12, "act on the tree
itself"): what only a browser shows. A node picked by a click on the chart is acted on from the bar; at
1600×1000 the bar is above the fold; a button that needs input opens the Edit plan tab with its form
drawn first (the CSS rule of `ui.layout.first_in_column`); a disabled button's tooltip says why; B sets
a breakpoint on the selected node, and the chart marks it ⏸.

What the runner does after each press, and the Plan changes view, are checked headless in
tests/test_console_bar_app.py and tests/test_console_node_actions.py.
"""

from __future__ import annotations

import re

import pytest
from console_helpers import box_of, click_node, only, open_console, start_demo, state_of
from playwright.sync_api import Locator, Page, expect
from test_console_shortcuts_e2e import button, press
from waiting import wait_until

from planner.tree import Status
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
    wait_until(lambda: top(field) < top(prune), "the form the bar opened drawn first", timeout=30)


def test_a_node_clicked_in_the_chart_is_acted_on_from_the_bar(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    page.set_viewport_size({"width": 1600, "height": 1000})
    session_id = start_demo(page, console, "cheapest-espresso", paused=True)
    click_node(page, "0.3")
    expect(page.get_by_role("tab", name="Node")).to_have_attribute("aria-selected", "true")
    box = bar_button(page, "Edit…").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1000, f"the bar is below the fold at 1600×1000: {box}"

    open_form(page, "Prune…")
    page.get_by_label("Prune 0.3: reason").fill("the first result is enough")
    page.locator(".st-key-prune_submit button").click()
    expect(page.get_by_text("prune applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).tree["0.3"].status is Status.PRUNED
    edit = bar_button(page, "Edit…")
    expect(edit, "a pruned node cannot be edited").to_be_disabled(timeout=30_000)
    edit.hover()
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

    press(page, "breakpoint", button(page, "breakpoint_btn"))  # B, with the focus on no field
    wait_until(
        lambda: state_of(console, session_id).config.node_breakpoints == {"0.3"}, "the breakpoint by B", timeout=60
    )
    expect(bar_button(page, "Remove breakpoint (0.3)"), "the bar now takes it away").to_be_enabled(timeout=30_000)
    marked = page.locator("svg text").filter(has_text=re.compile(r"^⏸ .*\b0\.3\b"))
    expect(marked.first, "0.3 marked ⏸ in the tree").to_be_visible(timeout=30_000)
