"""The navigations of the agent's page: opening a URL, going back, and waiting for what an action started.

Playwright waits for a navigation an action starts directly, not for one a script starts a moment
later, nor does it say which HTTP status answered it. `Navigation` follows the page's top-level
requests, so an action can wait until a requested page has answered and loaded, and fail with the
HTTP error it met.
"""

from __future__ import annotations

import time

from playwright.sync_api import Error, Frame, Request, Response
from playwright.sync_api import Page as PlaywrightPage
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from planner.browser.failures import _ActionFailed

__all__ = ["POLL_MS", "SETTLE_MS", "Navigation", "frame_of", "is_top_navigation", "stop_loading"]

SETTLE_MS = 100
"""Pause after clicks and submits so script-driven navigations and re-renders can start."""
POLL_MS = 50
_DOWNLOAD_STARTS = "Download is starting"
"""How Playwright fails a goto whose answer is a file to download."""


def frame_of(request: Request) -> Frame | None:
    """The frame a request belongs to; None for a popup's first navigation, sent before its frame exists."""
    try:
        return request.frame
    except Error:
        return None


def is_top_navigation(request: Request) -> bool:
    if not request.is_navigation_request():
        return False
    frame = frame_of(request)
    return frame is None or frame.parent_frame is None


def stop_loading(page: PlaywrightPage) -> None:
    """Abandon a navigation that timed out, so the observation shows a page that stays put."""
    try:  # CDP rather than window.stop(): scripts cannot run until a pending navigation commits
        session = page.context.new_cdp_session(page)
        session.send("Page.stopLoading")
        session.detach()
    except Error:
        pass  # the page is mid-commit; the observation retries until it settles


class Navigation:
    """What one action's top-level navigations did: whether one was requested, which are still
    unanswered, the status that answered the last, and whether that answer was an attachment."""

    def __init__(self, timeout_ms: int) -> None:
        self._timeout_ms = timeout_ms
        self._status: tuple[str, int] | None = None
        self._requested = False
        self._attachment = False
        self._pending: set[Request] = set()

    def attach(self, page: PlaywrightPage) -> None:
        """Follow the navigations of `page`, the agent's new page."""
        page.on("request", self._on_request)
        page.on("requestfailed", self._on_request_done)
        page.on("response", self._on_response)
        self._pending.clear()

    def start(self) -> None:
        """An action begins: nothing navigated yet."""
        self._status, self._requested, self._attachment = None, False, False

    @property
    def requested(self) -> bool:
        """The action requested a new top-level page (so a timeout is the navigation's)."""
        return self._requested

    @property
    def attachment(self) -> bool:
        """The action's navigation was answered with an attachment, which Chromium downloads."""
        return self._attachment

    def goto(self, page: PlaywrightPage, url: str) -> bool:
        """Open `url` (absolute) and wait for it to load; False when its answer is a file Chromium
        downloads instead, the page staying where it was."""
        try:
            response = page.goto(url, wait_until="load", timeout=self._timeout_ms)
        except Error as error:
            if _DOWNLOAD_STARTS not in str(error):
                raise
            return False
        if response is not None:
            self._status = (response.url, response.status)
        return True

    def go_back(self, page: PlaywrightPage) -> None:
        before = page.url
        response = page.go_back(wait_until="load", timeout=self._timeout_ms)
        if response is None and page.url == before:
            raise _ActionFailed("there is no previous page to go back to")

    def settle(self, page: PlaywrightPage) -> None:
        """Give a click or submit time to start a navigation, then wait for any page to load.

        Playwright already waits for navigations an action starts directly; this catches the ones
        scripts start a moment later.
        """
        page.wait_for_timeout(SETTLE_MS)
        self.await_load(page)

    def await_load(self, page: PlaywrightPage) -> None:
        """Wait for a navigation that was requested to be answered, then for the page to load."""
        deadline = time.monotonic() + self._timeout_ms / 1000
        while self._pending and time.monotonic() < deadline:  # requested, no answer yet
            page.wait_for_timeout(POLL_MS)
        try:
            if self._pending:
                raise PlaywrightTimeout("no response")
            remaining = max(deadline - time.monotonic(), 0.001) * 1000
            page.wait_for_load_state("load", timeout=remaining)
        except PlaywrightTimeout:
            stop_loading(page)
            raise _ActionFailed(f"navigation timed out after {self._timeout_ms / 1000:g} s") from None

    def http_error(self, page: PlaywrightPage) -> str | None:
        """The HTTP error that answered the action's navigation, with the error page's title; None if none."""
        if self._status is None or self._status[1] < 400:
            return None
        url, status = self._status
        try:
            title = page.title()
        except Error:
            title = ""
        return f"HTTP {status} at {url}: {title}" if title else f"HTTP {status} at {url}"

    def _on_request(self, request: Request) -> None:
        if is_top_navigation(request):
            self._requested = True
            self._pending.add(request)

    def _on_request_done(self, request: Request) -> None:
        self._pending.discard(request)

    def _on_response(self, response: Response) -> None:
        request = response.request
        self._pending.discard(request)
        if is_top_navigation(request):
            self._status = (response.url, response.status)
            if response.headers.get("content-disposition", "").strip().lower().startswith("attachment"):
                self._attachment = True  # Chromium downloads it instead: the action waits for the download
