"""Undo from the real console in headless Chromium: an injected sub-goal shows as the edit's diff
under the forms, and "Undo last edit" takes it out of the plan again."""

from __future__ import annotations

import pytest
from console_helpers import edit_node, start_demo, state_of, wait_until
from playwright.sync_api import Page, expect

from planner.tree import Origin, Status
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_inject_shows_its_diff_and_undo_takes_it_back(page: Page, console: ConsoleProcess) -> None:
    page.set_viewport_size({"width": 1500, "height": 1150})
    page.goto(console.url)
    expect(page.get_by_text("New session")).to_be_visible(timeout=30_000)
    session_id = start_demo(page, console, paused=True, task_id="keyboard-brand-backpack")
    edit_node(page, "0")
    goals = page.locator('[class*="st-key-inject_goals-"] textarea')
    expect(goals, "the root's own inject field").to_have_count(1, timeout=30_000)
    goals.fill("check the <b>brand</b> first")
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    injected = [n for n in state_of(console, session_id).tree.walk() if n.origin is Origin.OPERATOR]
    assert [n.parent for n in injected] == ["0"], "one sub-goal injected under the root"
    node_id = injected[0].id
    last_edit = page.locator(".st-key-last_edit")
    expect(last_edit.get_by_text(f"added {node_id} · check the <b>brand</b> first")).to_be_visible(timeout=30_000)
    undo = page.locator(".st-key-undo_btn").get_by_role("button", name="Undo last edit")  # not the hidden copy
    expect(undo, "one Undo button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    expect(undo, "Undo enabled while the injected node has not run").to_be_enabled(timeout=30_000)
    undo.click()
    expect(page.get_by_text("undo applied")).to_be_visible(timeout=15_000)
    wait_until(
        lambda: state_of(console, session_id).tree[node_id].status is Status.DELETED,
        what=f"{node_id} taken out of the plan",
    )
    expect(last_edit.get_by_text(f"added {node_id}")).to_have_count(0, timeout=30_000)
    expect(last_edit.get_by_text("No plan edit to undo.")).to_be_visible(timeout=30_000)
    expect(undo, "one Undo button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    expect(undo, "nothing left to undo").to_be_disabled(timeout=30_000)
    state = state_of(console, session_id)
    assert state.tree[node_id].reason == "undone by operator" and state.edits == []
