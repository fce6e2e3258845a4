"""The approval box in the real console and headless Chromium (issue 12): a guarded click shows the
page it would act on with the element outlined and named, an edited action the page cannot run is
refused under the box while the request stays, and "Reject and pause" fails the action with the
operator's reason and pauses the session instead of letting the planner recover. The approval
screenshot of docs/console.md comes from this run."""

from __future__ import annotations

from pathlib import Path

import pytest
from console_helpers import only, open_console, readme_shot, start_demo, state_of
from playwright.sync_api import Page, expect
from waiting import wait_until

from planner.events import Cause
from planner.state import RunStatus
from planner.tree import Status
from ui.server import ConsoleProcess
from ui.views.edit import APPROVAL_PICTURE_ALT

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_approval_box_shows_the_element_refuses_a_bad_edit_and_rejects_into_a_pause(
    page: Page, console: ConsoleProcess
) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "add-backpack-to-cart")
    wait_until(
        lambda: state_of(console, session_id).status is RunStatus.AWAITING_APPROVAL,
        "the guarded Add to cart",
        timeout=120,
    )
    held = state_of(console, session_id)
    approval = held.approval
    assert approval is not None and (approval.role, approval.name) == ("button", "Add to cart"), approval
    assert approval.screenshot is not None and Path(approval.screenshot).is_file(), approval.screenshot
    assert approval.box is not None and approval.box.width > 0 and approval.box.height > 0, approval.box

    picture = page.get_by_role("img", name=APPROVAL_PICTURE_ALT)
    expect(picture, "the outlined page in the approval box").to_be_visible(timeout=30_000)
    wait_until(
        lambda: picture.evaluate("i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0"),
        "the approval picture to load",
        timeout=30,
    )
    assert picture.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [1280, 800], "the viewport, in CSS pixels"
    expect(page.get_by_text("button “Add to cart”"), "the element's role and name").to_be_visible(timeout=30_000)
    readme_shot(page, "console-approval.png")

    only(page, '[class*="st-key-approval_action-"] input').fill("click [9999]")
    page.locator(".st-key-edit_action_submit button").click()
    refusal = "click [9999] cannot run on this page: element 9999 is not on the page"
    expect(page.get_by_text(refusal), "the runner's refusal under the approval box").to_be_visible(timeout=30_000)
    still = state_of(console, session_id)
    assert still.status is RunStatus.AWAITING_APPROVAL and still.approval == approval, "the request stays"
    assert still.tree[approval.node_id].action == approval.action, "the refused edit changed nothing"

    only(page, '[class*="st-key-approval_reason-"] input').fill("no purchases in a demo")
    page.locator(".st-key-reject_pause_submit button").click()
    wait_until(
        lambda: state_of(console, session_id).status is not RunStatus.AWAITING_APPROVAL, "the rejection", timeout=60
    )
    state = state_of(console, session_id)
    reason = "rejected by operator: no purchases in a demo"
    assert (state.status, state.cause, state.reason) == (RunStatus.PAUSED, Cause.OPERATOR, reason)
    node = state.tree[approval.node_id]
    assert (node.status, node.reason) == (Status.FAIL, reason)
    assert (state.steps, state.metrics.actions) == (held.steps, held.metrics.actions), "the planner did not go on"
    expect(page.get_by_text(reason).first, "the pause's reason on the page").to_be_visible(timeout=30_000)
    expect(picture, "the approval box is gone").to_have_count(0, timeout=30_000)


_WATCH_THE_BOX = """
() => {
  window.__box = {complete: 0, incomplete: []};
  const check = () => {
    const box = document.querySelector('.st-key-approval_box');
    if (!box || getComputedStyle(box).visibility === 'hidden' || box.getBoundingClientRect().height === 0) return;
    const text = box.innerText;
    const parts = {
      header: text.includes('Approval required'),
      element: text.includes('Element'),
      action: box.querySelector('pre, code') !== null,
      picture: box.querySelector('img[alt="ALT"]') !== null,
      approve: box.querySelector('.st-key-approve_submit button') !== null,
      reject: box.querySelector('.st-key-reject_pause_submit button') !== null,
    };
    if (Object.values(parts).every(Boolean)) window.__box.complete += 1;
    else window.__box.incomplete.push(parts);
  };
  const everyFrame = () => { check(); requestAnimationFrame(everyFrame); };
  requestAnimationFrame(everyFrame);
}
"""


def test_an_approval_box_is_never_seen_without_its_element_action_picture_and_buttons(
    page: Page, console: ConsoleProcess
) -> None:
    """Every frame the browser paints is checked (just before it paints): the box is either not seen or
    seen whole, from its first drawing and after each reload."""
    page.add_init_script(f"({_WATCH_THE_BOX.replace('ALT', APPROVAL_PICTURE_ALT)})()")
    open_console(page, console)
    session_id = start_demo(page, console, "add-backpack-to-cart")
    wait_until(
        lambda: state_of(console, session_id).status is RunStatus.AWAITING_APPROVAL,
        "the guarded Add to cart",
        timeout=120,
    )
    for drawing in range(3):
        wait_until(
            lambda: page.evaluate("() => window.__box.complete") > 0, f"the whole box seen ({drawing})", timeout=60
        )
        incomplete = page.evaluate("() => window.__box.incomplete")
        assert incomplete == [], f"drawing {drawing}: the box was seen without some of its parts: {incomplete[:3]}"
        page.reload()  # the box drawn from nothing again, on a fresh page
