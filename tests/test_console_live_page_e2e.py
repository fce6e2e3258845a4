"""The live page beside the tree, and the first browser step's status, in the real console in headless Chromium.

Issue 12, "Make supervising fast": an operator watching a run sees the newest screenshot next to the
plan, with the page and the action it shows, refreshed with each action and left alone between
actions; and the first browser step says what it waits for (Chromium starting) instead of a bare
"expanding 0" for seconds.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from console_helpers import SESSION_PICKER, TASKS, open_console, state_of, store_of, unfold_start_options
from playwright.sync_api import Page, WebSocket, expect
from waiting import wait_until

from planner.events import ActionExecuted
from planner.state import RunStatus
from sessions.client.commands import queue_command
from ui.server import ConsoleProcess
from ui.views.page_view import LIVE_PAGE_ALT, thumbnail_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_WORD_JOINER = "\u2060"
"""The console puts one inside every URL it shows, so that no URL becomes a live link."""


def start_session(page: Page, console: ConsoleProcess, choice: str, fill: Callable[[], None] = lambda: None) -> str:
    """Start a session from the sidebar form, the way an operator does; returns the session id."""
    before = {info.id for info in store_of(console).sessions()}
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator(".st-key-new_task_choice input").fill(choice.split(" (")[0])
    page.get_by_role("option", name=choice).click()
    expect(sidebar.locator(".st-key-new_task_choice input")).to_have_value(choice)
    fill()
    sidebar.locator(".st-key-start_session button").click()
    wait_until(lambda: {i.id for i in store_of(console).sessions()} - before != set(), "the new session", timeout=30)
    session_id = store_of(console).sessions()[0].id
    expect(sidebar.locator(SESSION_PICKER)).to_have_value(re.compile(rf"{session_id}$"), timeout=30_000)
    return session_id


def latest_action(console: ConsoleProcess, session_id: str) -> ActionExecuted:
    runs = [e.payload for e in store_of(console).load(session_id) if isinstance(e.payload, ActionExecuted)]
    assert runs, "the run executed no action"
    return runs[-1]


def test_the_live_page_follows_the_run_and_is_left_alone_between_actions(page: Page, console: ConsoleProcess) -> None:
    screenshots_sent: list[int] = []

    def watch(socket_: WebSocket) -> None:
        def frame(payload: str | bytes) -> None:
            data = payload if isinstance(payload, bytes) else payload.encode()
            if b"data:image/jpeg;base64," in data and LIVE_PAGE_ALT.encode() in data:
                screenshots_sent.append(len(data))

        socket_.on("framereceived", frame)

    page.on("websocket", watch)
    open_console(page, console)
    task = TASKS["wireless-photo-printers"]
    session_id = start_session(page, console, f"{task.title} ({task.kind.value})")
    live = page.locator(".st-key-live_page")
    image = live.get_by_role("img", name=LIVE_PAGE_ALT)
    expect(image, "the live page's screenshot, next to the tree").to_be_visible(timeout=60_000)
    expect(live, "the screenshot's age while the run goes on").to_contain_text(re.compile(r"\d+ (s|min) ago"))
    chart = page.get_by_role("img", name=re.compile(r"^Plan tree of")).first
    expect(chart, "the tree").to_be_visible(timeout=30_000)
    tree = chart.bounding_box()
    assert tree is not None and tree["y"] + 100 < 1000, f"the tree is on screen beside the live page: {tree}"
    seen: set[str] = set()
    deadline = time.monotonic() + 120
    while len(seen) < 2:
        assert time.monotonic() < deadline, f"timed out waiting for a second screenshot on the live page ({seen})"
        assert not state_of(console, session_id).finished, "the run finished before the live page changed"
        seen.update(image.evaluate_all("images => images.map(i => i.src.length + ':' + i.src.slice(-80))"))
        page.wait_for_timeout(200)
    queue_command(store_of(console), session_id, {"kind": "pause"})
    wait_until(lambda: state_of(console, session_id).status is RunStatus.PAUSED, "the pause", timeout=60)

    # The newest screenshot, with the latest action's page as its caption.
    last = latest_action(console, session_id)
    assert last.screenshot and last.url, "a demo shop action leaves a screenshot and a URL"
    shown = thumbnail_url(last.screenshot)  # the live page's copy, at most 640 px wide
    wait_until(
        lambda: image.evaluate_all("images => images.map(i => i.src)") == [shown],
        "the latest action's screenshot, alone, on the live page",
        timeout=30,
    )
    wait_until(
        lambda: f"after {last.action[:30]}" in live.inner_text().replace(_WORD_JOINER, ""),
        "the caption to name the latest action",
        timeout=30,
    )
    # Paused, the page stands still: the caption gives the time the screenshot was taken (an age would
    # stop counting), and the image is neither sent again nor replaced.
    expect(live, "the time of day the screenshot was taken").to_contain_text(
        re.compile(r"taken at \d\d:\d\d:\d\d"), timeout=30_000
    )
    image.evaluate("i => { i.dataset.mark = 'kept'; }")
    screenshots_sent.clear()
    time.sleep(5)
    marks = image.evaluate_all("images => images.map(i => i.dataset.mark || 'new')")
    assert marks == ["kept"], f"a redraw replaced the unchanged screenshot's <img>: {marks}"
    assert screenshots_sent == [], f"the unchanged live screenshot was sent again: {screenshots_sent} bytes"


@pytest.fixture
def silent_site() -> Iterator[str]:
    """A site that accepts connections and never answers: the browser's first page load waits for it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"


def test_the_first_browser_step_says_chromium_is_starting(
    page: Page, console: ConsoleProcess, silent_site: str
) -> None:
    open_console(page, console)
    sidebar = page.locator('[data-testid="stSidebar"]')

    def own_task() -> None:
        sidebar.locator(".st-key-new_task_text textarea").fill("find the cheapest espresso machine")
        unfold_start_options(sidebar)
        sidebar.locator(".st-key-new_start_url input").fill(silent_site)

    start_session(page, console, "Your own task…", own_task)
    status = page.get_by_text(re.compile(r"starting Chromium and opening http:\u2060?//127\.0\.0\.1:\u2060?\d+/"))
    expect(status.first, "the status line says Chromium is starting").to_be_visible(timeout=60_000)
    expect(page.locator(".st-key-live_page")).to_contain_text("no screenshot yet")
