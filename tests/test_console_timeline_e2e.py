"""The timeline and forks in a real console and Chromium (issue 12, defects 10 and 2): scrubbing back
draws the plan as it was, with what changes later marked; a fork opens as itself and shows its plan
beside its parent's; a second approval never shows the first one's answer."""

from __future__ import annotations

import re
import time

import pytest
from console_helpers import (
    SESSION_PICKER,
    TASKS,
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
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _labels(page: Page, alt: str) -> list[str]:
    """The node labels of the chart whose image is named `alt`."""
    chart = page.get_by_role("img", name=alt)
    expect(chart, f"the chart {alt!r}").to_be_visible(timeout=30_000)
    return [text.strip() for text in chart.locator("svg text").all_text_contents()]


def test_scrub_back_draws_the_past_plan_and_a_fork_is_drawn_beside_its_parent(
    page: Page, console: ConsoleProcess
) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "cheapest-espresso")
    wait_for_the_end(page, console, session_id, 90, "the run to finish", back=True)
    final = state_of(console, session_id)
    assert final.status is RunStatus.SUCCEEDED
    expanded = next(
        e.seq for e in store_of(console).load(session_id) if e.kind is Kind.NODE_EXPANDED and e.node_id == "0"
    )

    open_tab(page, "Timeline")
    slider = page.get_by_role("slider")
    expect(slider, "the timeline's slider at the live end").to_have_value(str(final.seq), timeout=30_000)
    slider.focus()
    for _ in range(final.seq - expanded):
        page.keyboard.press("ArrowLeft")
    expect(slider, f"the slider at event {expanded}").to_have_value(str(expanded), timeout=30_000)
    expect(page.get_by_text(f"At event {expanded}: ").first).to_be_visible(timeout=30_000)

    # The past plan is a chart, not text: the root's sub-goals as planned, none run yet, each marked Δ
    # since every one of them changes afterwards.
    past = _labels(page, f"Plan tree at event {expanded}")
    children = final.tree["0"].children
    for child in children:
        assert any(re.search(rf"Δ .*\b{re.escape(child)}\b", label) for label in past), (child, past)
    live = _labels(page, re.compile(r"^Plan tree of \d+ nodes"))
    assert past != live and not any("Δ" in label for label in live), "the past plan is drawn as it was, apart"
    expect(page.get_by_text(re.compile(rf"^Since event {expanded}: \d+ nodes changed"))).to_be_visible()

    # Fork there: the fork opens as itself, never read as its parent, and starts paused.
    before = {info.id for info in store_of(console).sessions()}
    page.get_by_role("button", name=f"Fork from event {expanded}").click()
    wait_until(lambda: {i.id for i in store_of(console).sessions()} - before != set(), 30, "the fork")
    fork_id = store_of(console).sessions()[0].id
    picker = page.locator(f'[data-testid="stSidebar"] {SESSION_PICKER}')
    expect(picker, "the picker naming the fork and where it comes from").to_have_value(
        re.compile(rf"· {fork_id} · fork of {session_id} at event {expanded}$"), timeout=30_000
    )
    expect(page.get_by_role("heading", name=TASKS["cheapest-espresso"].task)).to_be_visible(timeout=30_000)
    fork = state_of(console, fork_id)
    assert fork.status is RunStatus.PAUSED and fork.forked_from == (session_id, expanded)

    # The fork's timeline compares it with its parent: both plans drawn side by side, differences marked.
    open_tab(page, "Timeline")
    expect(page.get_by_text(f"Compared with {session_id}").first).to_be_visible(timeout=30_000)
    ours = _labels(page, "Plan tree of this fork")
    theirs = _labels(page, f"Plan tree of the parent, {session_id}")
    for child in children:
        assert any(re.search(rf"Δ .*\b{re.escape(child)}\b", label) for label in theirs), (child, theirs)
        assert any(re.search(rf"Δ .*\b{re.escape(child)}\b", label) for label in ours), (child, ours)
    expect(page.get_by_text(re.compile(r"^Plan of the parent, .*: \d+ of its nodes differ"))).to_be_visible()


def test_a_second_approval_never_shows_the_first_ones_answer(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "checkout-french-press")
    box = page.locator("strong").filter(has_text="Approval required")

    def awaiting(count: int) -> bool:
        state = state_of(console, session_id)
        requests = sum(1 for e in store_of(console).load(session_id) if e.kind is Kind.APPROVAL_REQUESTED)
        return state.status is RunStatus.AWAITING_APPROVAL and requests == count

    wait_until(lambda: awaiting(1), 90, "the first approval request")
    expect(box, "the first approval box").to_be_visible(timeout=30_000)
    first = state_of(console, session_id).approval
    assert first is not None
    page.locator(".st-key-approve_submit button").click()
    # The press's answer ("approval queued" or "applied") belongs to the first request's box alone.
    wait_until(
        lambda: any(e.kind is Kind.APPROVAL_GRANTED for e in store_of(console).load(session_id)),
        60,
        "the first approval applied",
    )

    wait_until(lambda: awaiting(2), 90, "the second approval request")
    second = state_of(console, session_id).approval
    assert second is not None and second.node_id != first.node_id
    expect(box, "the second approval box").to_be_visible(timeout=30_000)
    expect(page.get_by_text(second.action, exact=False).first).to_be_visible(timeout=30_000)
    # Absent is only told over a while: the live panel redraws every 0.75 s, and the answer would come
    # with a redraw after the box's first.
    answer = page.get_by_text(re.compile(r"approval (applied|queued)"))
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        assert answer.count() == 0, "the first approval's answer shows under the second box"
        expect(box, "the second approval box, still on screen").to_be_visible()
        page.wait_for_timeout(100)
