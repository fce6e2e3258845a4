"""Acting on the tree itself from the real console in headless Chromium: "Break here" on a node makes
the run pause as it is about to enter it, and an inject "after" a node lands right after it among its
parent's children."""

from __future__ import annotations

import re

import pytest
from console_helpers import control, edit_node, only, open_console, start_demo, state_of, wait_until
from playwright.sync_api import Page, expect

from planner.frames import Frame, next_position
from planner.state import RunStatus
from planner.tree import Origin, Status
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASK = "keyboard-brand-backpack"


def _expanded_root(page: Page, console: ConsoleProcess) -> str:
    """A paused demo session stepped until the root has its sub-goals; returns its id."""
    open_console(page, console)
    session_id = start_demo(page, console, TASK, paused=True)
    children = state_of(console, session_id).tree["0"].children
    assert len(children) >= 2, f"the root was expanded into several sub-goals: {children}"
    return session_id


def test_break_here_pauses_the_run_as_it_enters_that_node(page: Page, console: ConsoleProcess) -> None:
    session_id = _expanded_root(page, console)
    target = state_of(console, session_id).tree["0"].children[1]
    edit_node(page, target)
    button = page.locator(".st-key-breakpoint_btn").get_by_role("button", name=f"Break here ({target})")
    expect(button, f"one Break here button, {target}'s").to_have_count(1, timeout=30_000)
    button.click()
    expect(page.get_by_text("breakpoint applied")).to_be_visible(timeout=15_000)
    assert state_of(console, session_id).config.node_breakpoints == {target}
    marked = page.locator("svg text").filter(has_text=re.compile(rf"^⏸ .*\b{re.escape(target)}\b"))
    expect(marked.first, f"{target} marked ⏸ in the tree").to_be_visible(timeout=30_000)
    remove = page.locator(".st-key-breakpoint_btn").get_by_role("button", name=f"Remove breakpoint ({target})")
    expect(remove, "the button now takes the breakpoint away").to_have_count(1, timeout=30_000)

    control(page, console, "resume")
    reason = f"breakpoint: at {target} (set by operator)"
    wait_until(
        lambda: (state := state_of(console, session_id)).status is RunStatus.PAUSED and state.reason == reason,
        90,
        f"the run to pause at {target}'s breakpoint",
    )
    state = state_of(console, session_id)
    position = next_position(state.tree)
    assert position is not None and (position.node.id, position.frame) == (target, Frame.ENTERING)
    assert state.tree[state.tree["0"].children[0]].status is Status.SUCCESS, "the sub-goal before it ran"
    expect(page.get_by_text(reason).first).to_be_visible(timeout=30_000)


def test_inject_after_a_node_lands_right_after_it(page: Page, console: ConsoleProcess) -> None:
    session_id = _expanded_root(page, console)
    before = list(state_of(console, session_id).tree["0"].children)
    edit_node(page, before[0])
    only(page, '[class*="st-key-inject_goals-"] textarea').fill("check the brand first")
    only(page, '[class*="st-key-inject_where-"]').get_by_text(f"after {before[0]}", exact=True).click()
    page.locator(".st-key-inject_submit button").click()
    expect(page.get_by_text("inject applied")).to_be_visible(timeout=15_000)
    state = state_of(console, session_id)
    injected = [n for n in state.tree.walk() if n.origin is Origin.OPERATOR]
    assert [(n.parent, n.description) for n in injected] == [("0", "check the brand first")]
    assert state.tree["0"].children == [before[0], injected[0].id, *before[1:]], "right after the selected node"
