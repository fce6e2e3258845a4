"""Waiting for what an action promised that comes late: its callbacks, a download, a new tab.

Chromium tells of a download or a new tab a moment after the click that caused it, and a timer or a
request the action started calls back later still; what comes then is the action's, so it waits,
polling, for at most a bounded time, and fails saying what did not come.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import Page as PlaywrightPage

from planner.browser.failures import _ActionFailed
from planner.browser.fence import Fence
from planner.browser.navigation import POLL_MS, Navigation
from planner.browser.page_events import PageEvents
from planner.browser.promises import Promise, read_promise

__all__ = ["await_callbacks", "await_download", "await_popup"]

_CALLBACK_WAIT_MS = 3000
"""How long an action waits at most for the timers and requests it started to call back."""


def await_callbacks(page: PlaywrightPage, navigation: Navigation) -> Promise:
    """What the action promised, once the timers and requests it started have called back (for at most
    `_CALLBACK_WAIT_MS`): a question asked, a tab opened or a page requested from a callback is the
    action's, so it is answered, followed or loaded before the action ends."""
    promise = read_promise(page)
    if not promise.busy:
        return promise
    deadline = time.monotonic() + _CALLBACK_WAIT_MS / 1000
    while promise.busy and time.monotonic() < deadline:
        page.wait_for_timeout(POLL_MS)
        promise = promise.then(read_promise(page))
    navigation.await_load(page)
    return promise


def await_download(page: PlaywrightPage, events: PageEvents, timeout_ms: int) -> None:
    """Wait for the download the action started: Chromium reports it a moment after the goto failed
    on it, the answer said "attachment" or the click on a download link, which on a loaded
    machine is after the action has returned (its report then went with the next action)."""
    if not _wait_until(page, lambda: events.download_started, timeout_ms):
        raise _ActionFailed(f"the action started a download that did not come within {timeout_ms / 1000:g} s")


def await_popup(page: PlaywrightPage, promised: str, events: PageEvents, fence: Fence, timeout_ms: int) -> None:
    """Wait for the tab the action promised (`promised` says why it would open), until the fence refuses
    it or the timeout passes."""
    if not _wait_until(page, lambda: events.tab_opened or fence.refused, timeout_ms):
        raise _ActionFailed(
            f"{promised}, but no new tab appeared within {timeout_ms / 1000:g} s; the page stayed where it was"
        )


def _wait_until(page: PlaywrightPage, done: Callable[[], bool], timeout_ms: int) -> bool:
    """Poll until `done()` or the timeout passes; whether it is done."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not done() and time.monotonic() < deadline:
        page.wait_for_timeout(POLL_MS)
    return done()
