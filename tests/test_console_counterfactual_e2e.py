"""Counterfactual re-ask from the real console in headless Chromium: the root's expansion asked again
with an instruction shows the new plan beside the original with its differences marked, and Adopt
applies it as a plan edit whose provenance the last edit shows."""

from __future__ import annotations

import pytest
from console_helpers import click_node, open_console, open_tab, start_demo, state_of, store_of, wait_until
from playwright.sync_api import Page, expect

from planner.events import CommandApplied, ModelCalled
from planner.questions import Question
from planner.tree import Status
from sessions.store.reading import load_events
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEPS = ["open the Keyboards category", "sort by rating", "note the brand of the top keyboard"]


def test_reask_the_roots_expansion_compare_and_adopt(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "keyboard-brand-backpack", paused=True)
    store = store_of(console)
    [call] = [
        e.seq
        for e in load_events(store, session_id)
        if isinstance(e.payload, ModelCalled) and e.payload.question is Question.EXPAND and e.node_id == "0"
    ]
    click_node(page, "0")
    open_tab(page, "Node")
    form = page.locator(".st-key-reask")
    expect(form, "the re-ask form under the root's model calls").to_have_count(1, timeout=30_000)
    form.locator('[class*="st-key-reask_instruction-"] textarea').fill(", then ".join(STEPS))
    reask = page.locator(".st-key-reask_submit").get_by_role("button", name="Re-ask")
    expect(reask, "one Re-ask button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    reask.click()
    expect(form.get_by_text(f"Call #{call} asked again", exact=False)).to_be_visible(timeout=30_000)
    expect(form.get_by_text(f"+ {STEPS[0]}", exact=False)).to_be_visible(timeout=30_000)
    expect(form.get_by_text("− 0.1 search for backpacks from the top keyboard brand", exact=False)).to_be_visible()
    last = state_of(console, session_id).seq
    assert last == store.session(session_id).last_seq, "the re-ask wrote nothing to the log"
    adopt = page.locator(".st-key-reask_adopt").get_by_role("button", name="Adopt")
    expect(adopt, "one Adopt button (a redraw's old one may linger)").to_have_count(1, timeout=30_000)
    adopt.click()
    expect(page.get_by_text("plan applied")).to_be_visible(timeout=30_000)
    wait_until(lambda: _open_children(console, session_id) == STEPS, what="the adopted plan under the root")
    [applied] = [e.payload for e in load_events(store, session_id) if isinstance(e.payload, CommandApplied)]
    assert applied.command["provenance"] == f"counterfactual of call #{call}"
    open_tab(page, "Edit plan")
    expect(page.locator(".st-key-last_edit").get_by_text(f"From the counterfactual of call #{call}")).to_be_visible(
        timeout=30_000
    )


def _open_children(console: ConsoleProcess, session_id: str) -> list[str]:
    tree = state_of(console, session_id).tree
    return [child.description for child in tree.children(tree["0"]) if child.status is Status.UNVISITED]
