"""Co-planning in the real console, in headless Chromium: a session started paused stops at its first
plan before any browser action, the operator edits that plan as a whole in the review table (deletes a
row, adds one, moves it up by its order number) and starts the run, which follows the new plan."""

from __future__ import annotations

import pytest
from console_helpers import (
    count_dom_changes,
    open_console,
    readme_shot,
    start_demo,
    state_of,
    store_of,
    wait_for_the_end,
    wait_until,
)
from playwright.sync_api import Locator, Page, expect

from planner.state import RunStatus
from planner.status import REMOVED
from planner.tree import Origin, Status
from sessions.client.commands import queue_command
from ui.server import ConsoleProcess
from ui.views.coplan import COLUMN_WIDTHS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_ROW = 35
"""Pixels per table row, the header's included (Streamlit's data grid)."""
_MARKERS = 32
"""Pixels of the row-marker column (the checkboxes that select a row to delete)."""


def _cell(row: int, column: str) -> dict[str, float]:
    """Where to click for a cell: `row` 1 is the first row under the header."""
    left = _MARKERS
    for name, width in COLUMN_WIDTHS.items():
        if name == column:
            return {"x": left + width / 2, "y": row * _ROW + _ROW / 2}
        left += width
    raise KeyError(column)


def _type_into(page: Page, grid: Locator, row: int, column: str, text: str) -> None:
    """Open a cell's editor, type, and commit: the grid is a canvas, so this is how a person does it."""
    grid.dblclick(position=_cell(row, column))
    editor = page.get_by_test_id("portal").locator("textarea, input")
    expect(editor.first, f"the editor of row {row}'s {column}").to_be_visible(timeout=15_000)
    # Key by key, at a person's pace: a redraw of the panel while the editor is open put the caret first
    # ("1.5" became ".51"), which is why a paused session's panel is drawn only when something changes.
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(text, delay=120)
    expect(editor.first, f"row {row}'s {column} typed").to_have_value(text, timeout=15_000)
    page.keyboard.press("Enter")
    expect(editor, f"row {row}'s {column} committed").to_have_count(0, timeout=15_000)
    page.wait_for_timeout(1000)  # the edit reaches the server, which draws the panel again


def test_start_paused_review_the_first_plan_edit_it_and_start(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "cheapest-espresso", paused=True)
    wait_until(
        lambda: state_of(console, session_id).reason == "plan review: 0 expanded as AND",
        what="the pause for the review of the root's first plan",
    )
    assert state_of(console, session_id).metrics.actions == 0, "no browser action before the review"
    review = page.locator(".st-key-plan_review")
    expect(review.get_by_text("Plan review")).to_be_visible(timeout=30_000)
    grid = review.get_by_test_id("stDataFrame")
    expect(grid.locator("canvas").first).to_be_visible(timeout=30_000)
    page.wait_for_timeout(500)  # the canvas settles its layout after it is first drawn
    readme_shot(page, "console-plan-review.png")

    # A paused session's page stands still while the operator reads and edits it (it was redrawn every
    # 0.75 s), yet follows what changes elsewhere: another operator's cost cap shows without a reload.
    changes = count_dom_changes(page, 5.0)
    assert changes < 50, f"{changes} DOM changes in 5 s on a paused session's page"
    queue_command(store_of(console), session_id, {"kind": "budget", "max_cost_usd": 7.5, "by": "bob"})
    expect(page.get_by_text("cost cap $7.5").first, "the cost cap set elsewhere").to_be_visible(timeout=30_000)

    grid.click(position={"x": _MARKERS / 2, "y": 2 * _ROW + _ROW / 2})  # select row 2 (0.2, the sort)
    page.keyboard.press("Delete")
    grid.hover()
    review.get_by_role("button", name="Add row").click()
    page.wait_for_timeout(500)  # the new row is drawn on the canvas
    _type_into(page, grid, 4, "description", "sort by price low to high")
    _type_into(page, grid, 4, "order", "1.5")
    review.locator(".st-key-plan_start button").click()

    def planned() -> list[str]:
        tree = state_of(console, session_id).tree
        return [c for c in tree["0"].children if tree[c].status not in REMOVED]

    wait_until(
        lambda: planned() == ["0.1", "0.5", "0.3", "0.4"],
        what=f"the edited plan, in its new order (now {planned()}, {state_of(console, session_id).reason})",
    )
    state = state_of(console, session_id)
    assert (state.tree["0.2"].status, state.tree["0.2"].reason) == (Status.PRUNED, "operator: removed in plan review")
    assert (state.tree["0.5"].origin, state.tree["0.5"].description) == (Origin.OPERATOR, "sort by price low to high")
    assert [e.payload.command["kind"] for e in state.edits] == ["plan"], "one edit on the undo stack"  # type: ignore[attr-defined]
    expect(review).to_have_count(0, timeout=30_000)
    wait_for_the_end(page, console, session_id, 90, "the run to finish")
    state = state_of(console, session_id)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert [state.tree[c].status for c in ("0.1", "0.5", "0.3", "0.4")] == [Status.SUCCESS] * 4
    assert state.tree["0.2"].type.value == "UNKNOWN", "the deleted row never ran"
