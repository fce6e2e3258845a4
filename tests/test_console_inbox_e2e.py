"""The attention inbox in the real console, in headless Chromium (issue 12, "Make supervising fast").

Sessions are written straight into the console's store in the states that need the operator (waiting
for approval, failed) or not (succeeded), so no run has to reach them; the console only reads them.
The browser's `Notification` is replaced before the page loads by a recorder, so the test sees every
notification the page asks for.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from console_helpers import SESSION_PICKER, box_of, readme_shot, wait_for_runs
from playwright.sync_api import Page, expect
from waiting import wait_until

from planner.config import EngineConfig
from planner.events import Event, Kind
from planner.state import Recorder, SessionState
from sessions.store import EventStore
from ui.server import ConsoleProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RECORD_NOTIFICATIONS = """
window.__notified = [];
window.Notification = class {
  constructor(title, options) { window.__notified.push({title, body: options.body, tag: options.tag}); }
  static get permission() { return "granted"; }
  static requestPermission() { return Promise.resolve("granted"); }
};
"""
"""Stands in for the browser's notifications: records each one the page shows."""


@pytest.fixture
def inbox_page(page: Page, console: ConsoleProcess) -> Page:
    page.context.grant_permissions(["notifications"], origin=console.url)
    page.add_init_script(RECORD_NOTIFICATIONS)
    page.set_viewport_size({"width": 1500, "height": 1150})
    return page


def write_session(
    store: EventStore, session_id: str, task: str, *later: tuple[Kind, str | None, dict[str, Any]]
) -> None:
    """A session created with `task`, then the events `later` (kind, node, fields), as a runner would leave it."""
    state = SessionState()
    rec = Recorder(state)
    config = EngineConfig(constraints=False).model_dump(mode="json")
    rec.record(Kind.SESSION_CREATED, task=task, start_url=None, model="demo", config=config, status="running")
    for kind, node, fields in later:
        rec.record(kind, node, **fields)
    events: list[Event] = rec.take()
    store.create_session(
        session_id, task, "demo", events, status=state.status.value, reason=state.reason, steps=state.steps
    )


def succeeded(store: EventStore, session_id: str, task: str) -> None:
    write_session(store, session_id, task, (Kind.SESSION_FINISHED, None, {"status": "succeeded", "final_answer": "ok"}))


def failed(store: EventStore, session_id: str, task: str) -> None:
    write_session(
        store, session_id, task, (Kind.SESSION_FINISHED, None, {"status": "failed", "reason": "no plan worked"})
    )


def waiting(store: EventStore, session_id: str, task: str) -> None:
    write_session(
        store,
        session_id,
        task,
        (Kind.NODE_EXPANDED, "0", {"type": "ACTION", "action": "click [9]"}),
        (Kind.APPROVAL_REQUESTED, "0", {"action": "click [9]", "rule": "a button named Buy"}),
    )


def items(page: Page) -> list[str]:
    """The inbox's items as they read, without their icons ("task · why")."""
    texts = page.locator(".st-key-inbox button:visible").all_inner_texts()
    return [text.strip().splitlines()[-1].removeprefix("● ") for text in texts if " · " in text]


def notified(page: Page) -> list[dict[str, str]]:
    return page.evaluate("() => window.__notified")


def expect_items(page: Page, wanted: list[str], what: str) -> None:
    """The inbox lists exactly these tasks, in this order (each item starts with its task)."""
    listed: list[str] = []
    deadline = time.monotonic() + 60
    while (listed := [text.split(" · ")[0] for text in items(page)]) != wanted:
        assert time.monotonic() < deadline, f"timed out waiting for the inbox to list {wanted} ({what}): {listed}"
        time.sleep(0.25)


def open_session(page: Page, console: ConsoleProcess, session_id: str, task: str) -> None:
    page.goto(f"{console.url}/?session={session_id}")
    expect(page.get_by_role("heading", name=task)).to_be_visible(timeout=60_000)


def test_the_inbox_lists_what_needs_the_operator_and_opens_it(
    inbox_page: Page, console: ConsoleProcess, console_store: EventStore
) -> None:
    page = inbox_page
    succeeded(console_store, "done-a", "Task done A")
    failed(console_store, "failed-a", "Task failed A")
    waiting(console_store, "wait-a", "Task waiting A")
    open_session(page, console, "done-a", "Task done A")
    expect_items(page, ["Task waiting A", "Task failed A"], "approval first, then the failure")
    assert "approval required: a button named Buy" in items(page)[0]
    assert "failed: no plan worked" in items(page)[1]
    wait_until(lambda: page.title() == "(2) AND/OR console", f"the title to count 2, not {page.title()!r}", timeout=30)
    assert notified(page) == [], "what the inbox held when the page opened was notified"

    waiting(console_store, "wait-b", "Task waiting B")  # arrives while a finished session is on screen
    expect_items(page, ["Task waiting B", "Task waiting A", "Task failed A"], "the new approval, newest first")
    wait_until(lambda: page.title() == "(3) AND/OR console", f"the title to count 3, not {page.title()!r}", timeout=30)
    wait_until(lambda: len(notified(page)) == 1, "a notification for the new approval", timeout=30)
    [note] = notified(page)
    assert note["title"] == "Approval needed" and "Task waiting B" in note["body"] and "wait-b" in note["tag"], note

    page.locator(".st-key-inbox_failed-a button:visible").click()
    expect(page.get_by_role("heading", name="Task failed A")).to_be_visible(timeout=60_000)
    wait_until(lambda: "session=failed-a" in page.url, f"the URL to name failed-a, not {page.url}", timeout=30)
    expect(page.locator(SESSION_PICKER)).to_have_value(re.compile(r"failed-a$"), timeout=30_000)

    page.locator(".st-key-inbox_wait-a button:visible").click()  # a session that can still change: the live panel runs
    expect(page.get_by_role("heading", name="Task waiting A")).to_be_visible(timeout=60_000)
    wait_until(lambda: "session=wait-a" in page.url, f"the URL to name wait-a, not {page.url}", timeout=30)
    failed(console_store, "failed-b", "Task failed B")  # arrives while a live session is on screen
    expect_items(page, ["Task waiting B", "Task waiting A", "Task failed B", "Task failed A"], "the new failure")
    # The two opened are seen: the title counts the new ones only (issue 27).
    wait_until(lambda: page.title() == "(2) AND/OR console", f"the title to count 2, not {page.title()!r}", timeout=30)
    wait_until(lambda: len(notified(page)) == 2, "a notification for the new failure", timeout=30)
    assert notified(page)[1]["title"] == "Session failed" and "Task failed B" in notified(page)[1]["body"]
    readme_shot(page, "console-inbox.png")
    wait_for_runs(page, 5, "more redraws of both kinds: nothing is notified twice")
    assert len(notified(page)) == 2, f"notified again: {notified(page)}"

    page.locator(".st-key-inbox_dismiss_failed-b button:visible").click()
    expect_items(page, ["Task waiting B", "Task waiting A", "Task failed A"], "failed B dismissed")
    wait_until(lambda: page.title() == "(1) AND/OR console", f"the title to count 1, not {page.title()!r}", timeout=30)
    page.locator(".st-key-inbox_all_seen button:visible").click()
    wait_until(lambda: page.title() == "AND/OR console", f"no new item in the title, not {page.title()!r}", timeout=30)
    page.reload()  # the marks are the store's, not the tab's
    expect_items(page, ["Task waiting B", "Task waiting A", "Task failed A"], "still dismissed after a reload")
    wait_until(lambda: page.title() == "AND/OR console", f"still all seen, not {page.title()!r}", timeout=30)
    rows = [box_of(row, "an inbox row")["height"] for row in page.locator('[class*="st-key-inbox_row_"]').all()]
    assert rows and max(rows) < 48, f"an inbox item takes more than one line: {rows} px"


def test_a_finished_page_with_a_full_inbox_stays_still(
    inbox_page: Page, console: ConsoleProcess, console_store: EventStore
) -> None:
    """The inbox watches the console_store on a finished session's page; while nothing new comes it changes
    nothing there, however many items it holds."""
    page = inbox_page
    succeeded(console_store, "done-still", "Task done still")
    for n in range(10):
        waiting(console_store, f"wait-still-{n}", f"Task waiting still {n}")
    open_session(page, console, "done-still", "Task done still")
    expect(page.locator("svg text").first).to_be_visible(timeout=30_000)
    wait_until(
        lambda: "Task waiting still 9" in " ".join(items(page)), "the inbox to list the newest approval", timeout=60
    )
    expect(page.locator(".st-key-inbox").get_by_text(re.compile(r"and \d+ more"))).to_be_visible(timeout=30_000)
    wait_for_runs(page, 1, "the last redraw settled before counting")
    page.evaluate(
        """() => { window.__changes = []; new MutationObserver(m => { window.__changes.push(...m.map(
        r => r.type + ' ' + String(r.target.className || r.target.nodeName).slice(0, 40))); })
        .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true}); }"""
    )
    wait_for_runs(page, 2, "two of the inbox's looks at the console_store")
    changes = page.evaluate("() => window.__changes")
    assert len(changes) < 50, f"{len(changes)} DOM changes in two runs of a finished session's page: {changes[:20]}"
    assert notified(page) == [], "the items on screen when the page opened were notified"


ASK_FOR_NOTIFICATIONS = """
window.__asked = 0;
window.__permission = "default";
window.Notification = class {
  constructor() {}
  static get permission() { return window.__permission; }
  static requestPermission() { window.__asked += 1; window.__permission = "granted"; return Promise.resolve("granted"); }
};
"""
"""A browser that has not been asked yet: it records each request for permission and then grants it."""


def test_notifications_are_asked_for_by_a_click_never_on_their_own(
    page: Page, console: ConsoleProcess, console_store: EventStore
) -> None:
    """Firefox and Safari ignore a permission request no click made (the inbox asked on its own)."""
    page.add_init_script(ASK_FOR_NOTIFICATIONS)
    page.set_viewport_size({"width": 1500, "height": 1150})
    succeeded(console_store, "done-ask", "Task done ask")
    open_session(page, console, "done-ask", "Task done ask")
    offer = page.locator(".st-key-inbox").get_by_role("button", name="Notify me of new items")
    expect(offer, "the offer to notify").to_be_visible(timeout=30_000)
    assert page.evaluate("() => window.__asked") == 0, "asked before the operator clicked"
    offer.click()
    expect(offer, "gone once allowed").to_have_count(0, timeout=30_000)
    assert page.evaluate("() => window.__asked") == 1
