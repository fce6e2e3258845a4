"""Co-planning in the real console, in headless Chromium: the page of a session paused for the review of
its first plan stands still while the operator reads and edits the review table (a redraw while a
cell's editor was open put the caret first: "1.5" became ".51"), yet follows what changes elsewhere.
The plan-review screenshot of docs/console.md comes from this page.

The table's edits (delete, add, reorder), the one plan command they make and the run that follows it
are checked headless in tests/test_console_views_app.py. The session is made straight in the
console's store and run to its review in this process, on the dry environment: no demo shop and no
second Chromium.
"""

from __future__ import annotations

import pytest
from console_helpers import TASKS, count_dom_changes, open_console, readme_shot, state_of, store_of
from playwright.sync_api import Page, expect

from planner.browser.dry import DRY_START
from planner.config import EngineConfig
from planner.state import RunStatus
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.worker.runner import Runner
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.console_env(ANDOR_SHOP="0")]


def test_a_paused_plan_review_stands_still_yet_follows_a_change_made_elsewhere(
    page: Page, console: ConsoleProcess
) -> None:
    store = store_of(console)
    config = EngineConfig(review_first_plan=True)  # as "Start paused" in the sidebar sets it
    session_id = create_session(store, TASKS["cheapest-espresso"].task, "demo", start_url=DRY_START, config=config)
    Runner(store, session_id).run(on_idle=lambda state: False)  # to the review of the root's first plan
    state = state_of(console, session_id)
    assert (state.status, state.reason) == (RunStatus.PAUSED, "plan review: 0 expanded as AND"), state.reason

    open_console(page, console)
    review = page.locator(".st-key-plan_review")
    expect(review.get_by_text("Plan review")).to_be_visible(timeout=30_000)
    grid = review.get_by_test_id("stDataFrame")
    expect(grid.locator("canvas").first, "the review table").to_be_visible(timeout=30_000)
    readme_shot(page, "console-plan-review.png")

    # A paused session's page stands still (it was redrawn every 0.75 s) ...
    changes = count_dom_changes(page, 5.0)
    assert changes < 50, f"{changes} DOM changes in 5 s on a paused session's page"
    # ... yet another operator's cost cap, applied by a runner elsewhere, shows without a reload.
    queue_command(store, session_id, {"kind": "budget", "max_cost_usd": 7.5, "by": "bob"})
    Runner(store, session_id).run(on_idle=lambda state: False)
    assert state_of(console, session_id).config.max_cost_usd == 7.5
    expect(page.get_by_text("cost cap $7.5").first, "the cost cap set elsewhere").to_be_visible(timeout=30_000)
    expect(review, "the review still open").to_be_visible()
