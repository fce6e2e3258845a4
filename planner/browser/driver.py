"""One environment's hold on its thread's Playwright driver and Chromium.

Playwright's sync API is bound to the thread that started it, and a thread can run only one driver:
environments on the same thread share it, and share the Chromium it launched, each in a browser context
of its own (its own cookies, storage and pages). Both stop when the last environment lets go, unless
`browser_kept` keeps them for the environments that follow: a suite of tasks run one after another then
starts one driver and one Chromium (about 1 CPU-s each time otherwise). An environment that drives a
browser server (`endpoint`) gets a connection of its own. An environment used from another thread gets
a `BrowserThreadError` instead of a Playwright deadlock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from playwright.sync_api import Browser, Error, Playwright, sync_playwright

from planner.browser.chromium import BrowserUnavailable, connect, launch
from planner.browser.failures import first_line
from planner.browser.server import BrowserEndpoint, BrowserServer
from planner.errors import PlannerError

__all__ = ["BrowserThreadError", "Driver", "browser_kept"]


class _Thread(threading.local):
    """This thread's driver, the Chromium it launched (by headless flag), and who holds them."""

    def __init__(self) -> None:
        self.playwright: Playwright | None = None
        self.launched: dict[bool, Browser] = {}
        self.users = 0
        self.kept = 0


_thread = _Thread()


class BrowserThreadError(PlannerError):
    """The environment was used from a thread other than the one its browser started on."""


class Driver:
    """The driver one environment uses: acquired on first use (on the calling thread, which it then
    belongs to), released on close or when no browser could be started on it."""

    def __init__(self) -> None:
        self._thread: int | None = None
        self._playwright: Playwright | None = None

    @property
    def running(self) -> bool:
        return self._playwright is not None

    def new_browser(self, endpoint: BrowserEndpoint | None, headless: bool) -> Browser:
        """The Chromium this thread's driver launched (launched now if there is none, or it died), or a
        connection of this environment's own to the browser server at `endpoint` (a worker's shared one
        through `BrowserServer.connect`); when none can be had (`BrowserUnavailable`), the driver is let
        go. Only a connection is the caller's to close."""
        if self._playwright is None:
            self._thread = threading.get_ident()
            self._playwright = _acquire_driver()
        playwright = self._playwright
        try:
            if endpoint is not None:
                return (
                    endpoint.connect(playwright)
                    if isinstance(endpoint, BrowserServer)
                    else connect(playwright, endpoint)
                )
            browser = _thread.launched.get(headless)
            if browser is None or not browser.is_connected():
                browser = _thread.launched[headless] = launch(playwright, headless=headless)
            return browser
        except BrowserUnavailable:
            self.release()
            raise

    def release(self) -> None:
        """Let go of the driver, stopping it and its Chromium when no other environment on the thread
        uses them and none are kept."""
        if self._playwright is not None:
            _thread.users -= 1
            self._playwright = None
            _stop_when_unused()

    def check_thread(self) -> None:
        current = threading.get_ident()
        if self._thread is not None and self._thread != current and self._playwright is not None:
            raise BrowserThreadError(
                "this BrowserEnvironment's browser was started on another thread; Playwright's sync API "
                "only works on the thread that started it"
            )


@contextlib.contextmanager
def browser_kept() -> Iterator[None]:
    """Keep this thread's driver and Chromium running between the environments used inside (each still
    gets a fresh browser context); both are started on first use, as ever, and stopped on leaving."""
    _thread.kept += 1
    try:
        yield
    finally:
        _thread.kept -= 1
        _stop_when_unused()


def _acquire_driver() -> Playwright:
    """This thread's Playwright driver, started on first use; a second `sync_playwright()` on a
    thread that already runs one fails with "using Playwright Sync API inside the asyncio loop"."""
    if _thread.playwright is None:
        try:
            _thread.playwright = sync_playwright().start()
        except Error as error:
            raise BrowserUnavailable(
                "Playwright cannot start on this thread, which already runs an asyncio loop or another "
                "Playwright (such as pytest-playwright's fixtures); use a thread of its own "
                f"({first_line(error)})"
            ) from error
    _thread.users += 1
    return _thread.playwright


def _stop_when_unused() -> None:
    if _thread.users or _thread.kept or _thread.playwright is None:
        return
    for browser in _thread.launched.values():
        with contextlib.suppress(Error):  # a Chromium that died is already gone
            browser.close()
    _thread.launched.clear()
    _thread.playwright.stop()
    _thread.playwright = None
