"""The console says what happened in the operator's words, in the real console and headless Chromium:
the engine's warning under the form that sent the command, a finished node's "reopen it first", a
refused form in one plain sentence, URLs in the status line as they are, the answer check beside the
status, and a row of the sessions table that opens its session.

Two demo runs: the over-ear task (its price filter fails with a URL full of `_` and `&`) paused at
that failure, and the Figure 13 task, whose naive plan the offline model gets wrong on purpose.
"""

from __future__ import annotations

import re

import pytest
from console_helpers import (
    SESSION_PICKER,
    TASKS,
    box_of,
    control,
    edit_node,
    only,
    open_console,
    open_tab,
    start_demo,
    state_of,
    store_of,
    wait_for_the_end,
    wait_until,
)
from playwright.sync_api import Page, expect

from planner.events import Kind
from planner.state import RunStatus
from planner.tree import NodeType, Status
from sessions.client.creation import create_session
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PYDANTIC = ("List should have", "validation error", "Input should be", "after validation", "Value error", "[type=")
"""pydantic's own wording, which no operator should ever read."""
ALERTS = '[data-testid="stAlert"]'
ROW = 35
"""The height of a row of Streamlit's table, its header included (the default `row_height`)."""


def _alerts(page: Page) -> list[str]:
    return page.locator(ALERTS).all_inner_texts()


def _no_pydantic(page: Page) -> None:
    said = [text for text in _alerts(page) if any(phrase in text for phrase in PYDANTIC)]
    assert not said, f"pydantic's wording reached the operator: {said}"


def _set_breakpoint_on_failure(page: Page) -> None:
    """Run settings: pause "when a node fails", as an operator sets it while the run waits."""
    open_tab(page, "Run settings")
    choice = only(page, '[class*="st-key-bp_choice-"]')
    box = choice.locator("input")
    for _ in range(6):  # a redraw closes an open list and forgets its focus: type again (see `choose`)
        box.fill("")
        box.fill("when a node fails")
        try:
            expect(page.get_by_role("option", name="when a node fails")).to_be_visible(timeout=10_000)
            box.press("Enter")
            expect(choice).to_contain_text("when a node fails", timeout=5_000)
            break
        except AssertionError:
            continue
    expect(choice, "the failure breakpoint chosen").to_contain_text("when a node fails")
    page.keyboard.press("Escape")
    page.locator(".st-key-bp_submit button").click()
    expect(page.get_by_text("breakpoints applied"), "the failure breakpoint applied").to_be_visible(timeout=30_000)


def test_a_failure_a_prune_and_refusals_read_in_the_operators_words(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "over-ear-under-100", paused=True)
    _set_breakpoint_on_failure(page)
    control(page, console, "resume")
    wait_until(
        lambda: (
            (state := state_of(console, session_id)).status is RunStatus.PAUSED
            and (state.reason or "").startswith("breakpoint: ")
        ),
        120,
        "the pause at the broken price filter's failure",
    )
    reason = state_of(console, session_id).reason or ""
    assert "min_price=&max_price=100" in reason, reason

    # The status line quotes the failure's URL as it is: no backslash before `_` or `&`, and no link.
    status = page.locator('[data-testid="stMarkdown"]').filter(has_text=re.compile(r"breakpoint: \S+ failed"))
    expect(status.first, "the status line says where the run stopped").to_contain_text(
        "min_price=&max_price=100", timeout=30_000
    )
    shown = status.first.inner_text()
    assert "\\" not in shown, f"the status line shows escapes: {shown!r}"
    links = page.evaluate("() => [...document.querySelectorAll('a')].map(a => a.textContent)")
    assert not [text for text in links if "\\" in text or "price" in text], f"text made a link: {links}"

    # Pruning an action that already ran: applied, with the engine's warning under that node's form.
    state = state_of(console, session_id)
    ran = next(n for n in state.tree.walk() if n.type is NodeType.ACTION and n.status is Status.SUCCESS)
    edit_node(page, ran.id)
    page.get_by_label(f"Prune {ran.id}: reason").fill("the category page is not part of the answer")
    page.locator(".st-key-prune_submit button").click()
    warning = page.locator(ALERTS).filter(has_text=f"prune applied — already ran in the browser: {ran.id} (")
    expect(warning, "the prune's answer carries the already-ran warning").to_be_visible(timeout=30_000)
    expect(warning).to_contain_text("does not undo it")
    assert state_of(console, session_id).tree[ran.id].status is Status.PRUNED

    # The pruned node's Edit plan tab: no description form, one line saying to reopen it first.
    finished = page.get_by_text(f"{ran.id} is finished (PRUNED): reopen it first")
    expect(finished, "the finished node says to reopen it first").to_be_visible(timeout=30_000)
    reopen = page.locator('.st-key-reopen_btn:not([data-stale="true"]) button').first  # a tooltip's copy beside it
    expect(reopen, "with Reopen right there").to_have_text(f"Reopen {ran.id}")
    expect(page.locator('[class*="st-key-edit_description_"]'), "and no description form").to_have_count(0)

    # Forms that cannot make a command, and one the command's own validation refuses: one plain sentence.
    edit_node(page, "0")
    goals = only(page, '[class*="st-key-inject_goals-"] textarea')
    goals.fill("\n   \n\n")
    page.locator(".st-key-inject_submit button").click()
    blank = page.locator(ALERTS).filter(has_text="Write at least one sub-goal, one per line, before pressing Inject.")
    expect(blank, "blank lines are no sub-goal").to_be_visible(timeout=30_000)
    goals.fill("\n".join(f"check shop {i}" for i in range(51)))
    page.locator(".st-key-inject_submit button").click()
    many = page.locator(ALERTS).filter(has_text="Sub-goals: too many (51); at most 50")
    expect(many, "51 sub-goals refused in the operator's words").to_be_visible(timeout=30_000)
    _no_pydantic(page)
    open_tab(page, "Run settings")
    cap = page.locator('[class*="st-key-budget_value_"] input')
    cap.fill("-5")
    page.locator(".st-key-budget_submit button").click()
    expect(page.get_by_text("Please enter a value between 0.00 and 10000.00"), "the cap's range").to_be_visible(
        timeout=30_000
    )
    _no_pydantic(page)
    state = state_of(console, session_id)
    assert state.config.max_cost_usd is None and len(state.tree["0"].children) < 51, "nothing refused was applied"
    assert not [e for e in store_of(console).load(session_id) if e.kind is Kind.COMMAND_REJECTED], (
        "the refusals were the forms' own, before anything was queued"
    )

    # On to the end (past each further failure's breakpoint): the answer is checked beside the status.
    for _ in range(8):
        if state_of(console, session_id).finished:
            break
        seq = state_of(console, session_id).seq
        control(page, console, "resume")
        wait_until(
            lambda seq=seq: (
                (s := state_of(console, session_id)).finished or (s.status is RunStatus.PAUSED and s.seq > seq)
            ),
            120,
            "the run to finish or stop at its next failure",
        )
    assert state_of(console, session_id).status is RunStatus.SUCCEEDED
    expect(page.get_by_text("Answer check: met"), "the bundled task's answer checked").to_be_visible(timeout=30_000)


def test_a_missed_answer_says_what_is_missing_and_a_table_row_opens_its_session(
    page: Page, console: ConsoleProcess
) -> None:
    other_task = "a dry session to open from the sessions table"
    other = create_session(store_of(console), other_task, "demo", paused=True)
    open_console(page, console)
    session_id = start_demo(page, console, "keyboard-brand-backpack")
    wait_for_the_end(page, console, session_id, 120, "the naive Figure 13 run to finish", back=True)
    missed = page.get_by_text("Answer check: not met — missing Northwind, Northwind Metro 18L, 54.99.")
    expect(missed, "the answer check names what the answer lacks").to_be_visible(timeout=30_000)

    open_tab(page, "All sessions")
    rows = [info.id for info in store_of(console).sessions()]
    grid = page.locator('[data-testid="stDataFrame"]')
    expect(grid, "the sessions table").to_be_visible(timeout=30_000)
    grid.scroll_into_view_if_needed()
    box = box_of(grid, "the sessions table")
    assert box["height"] >= ROW * (len(rows) + 1) - 2, f"every row drawn: {box}"
    # A click on the row's task, where a person reads it (not only on the narrow row marker).
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + ROW * (rows.index(other) + 1) + ROW / 2)
    expect(page, "the URL names the session clicked").to_have_url(
        re.compile(rf"[?&]session={other}(&|$)"), timeout=30_000
    )
    expect(page.get_by_role("heading", name=other_task), "its heading").to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name=TASKS["keyboard-brand-backpack"].task)).to_have_count(0)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.locator(SESSION_PICKER), "the sidebar's picker follows").to_have_value(
        re.compile(rf"{other}$"), timeout=30_000
    )
