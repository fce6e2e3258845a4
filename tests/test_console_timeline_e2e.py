"""A second approval never shows the first one's answer (issue 12), in a real console and Chromium: the
answer to a press lives in the browser tab's state, so only a page that lived through both requests
can show it. (The timeline and forks, the rest of issue 12 here before, are checked headless in
tests/test_console_views_app.py.)"""

from __future__ import annotations

import re

import pytest
from console_helpers import open_console, start_demo, state_of, store_of
from playwright.sync_api import Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from waiting import wait_until

from planner.events import Kind
from planner.state import RunStatus
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNS = 4
"""How many runs of the page (whole, or a fragment's: the still page asks the store every 0.75 s) the
second box is watched for: the answer, were it kept, would come with a redraw after the box's first."""
_WATCH_ANSWERS = """() => {
  const seen = window.__answers = [];
  const look = () => {
    const found = document.body.textContent.match(/approval (applied|queued)[^\\n]{0,60}/);
    if (found) seen.push(found[0]);
  };
  look();
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
"""Record every time the page holds a press's answer, from now on: each change of the page is looked at."""


def _a_run_ended(payload: str | bytes) -> bool:
    """Whether a message from the console ends one of the page's runs."""
    if isinstance(payload, str):
        return False
    message = ForwardMsg()
    message.ParseFromString(payload)
    return message.WhichOneof("type") == "script_finished"


def test_a_second_approval_never_shows_the_first_ones_answer(page: Page, console: ConsoleProcess) -> None:
    open_console(page, console)
    session_id = start_demo(page, console, "checkout-french-press")
    box = page.locator("strong").filter(has_text="Approval required")

    def awaiting(count: int) -> bool:
        state = state_of(console, session_id)
        requests = sum(1 for e in store_of(console).load(session_id) if e.kind is Kind.APPROVAL_REQUESTED)
        return state.status is RunStatus.AWAITING_APPROVAL and requests == count

    # Nothing to watch until the first request (a live page costs the browser most of a core): the page
    # that answers it is opened then, and lives on through the second.
    url = page.url
    page.goto("about:blank")
    wait_until(lambda: awaiting(1), "the first approval request", timeout=90)
    with page.expect_websocket(lambda socket: socket.url.endswith("/_stcore/stream")) as opened:
        page.goto(url)
    stream = opened.value
    expect(box, "the first approval box").to_be_visible(timeout=30_000)
    first = state_of(console, session_id).approval
    assert first is not None
    # Pressed between two runs of the freshly opened page (see `console_helpers.step_once`).
    expect(page.locator('[data-testid="stApp"]'), "the page between two runs").to_have_attribute(
        "data-test-script-state", "notRunning", timeout=30_000
    )
    page.locator(".st-key-approve_submit button").click()
    # The press's answer ("approval queued" or "applied") belongs to the first request's box alone.
    wait_until(
        lambda: any(e.kind is Kind.APPROVAL_GRANTED for e in store_of(console).load(session_id)),
        "the first approval applied",
        timeout=60,
    )

    wait_until(lambda: awaiting(2), "the second approval request", timeout=90)
    second = state_of(console, session_id).approval
    assert second is not None and second.node_id != first.node_id
    expect(box, "the second approval box").to_be_visible(timeout=30_000)
    expect(page.get_by_text(second.action, exact=False).first).to_be_visible(timeout=30_000)
    page.evaluate(_WATCH_ANSWERS)
    for run in range(RUNS):
        stream.wait_for_event("framereceived", predicate=_a_run_ended, timeout=30_000)
        assert page.evaluate("() => window.__answers") == [], (
            f"the first approval's answer shows under the second box (within {run + 1} runs of the page)"
        )
    expect(box, "the second approval box, still on screen").to_be_visible()
    assert page.get_by_text(re.compile(r"approval (applied|queued)")).count() == 0, "and no answer under it"
