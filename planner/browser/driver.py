"""One environment's hold on its thread's Playwright driver, and the browser it starts there.

Playwright's sync API is bound to the thread that started it, and a thread can run only one driver:
environments on the same thread share it (each still has its own browser), and it stops when the last
of them lets go. An environment used from another thread gets a `BrowserThreadError` instead of a
Playwright deadlock.
"""

from __future__ import annotations

import threading

from playwright.sync_api import Browser, Error, Playwright, sync_playwright

from planner.browser.chromium import BrowserUnavailable, connect, launch
from planner.browser.failures import first_line
from planner.errors import PlannerError

__all__ = ["BrowserThreadError", "Driver"]

_drivers = threading.local()


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

    def new_browser(self, endpoint: str | None, headless: bool) -> Browser:
        """A Chromium launched on this thread's driver (started unless another environment on the thread
        runs one already), or the one a browser server at `endpoint` runs; when none can be had
        (`BrowserUnavailable`), the driver is let go."""
        if self._playwright is None:
            self._thread = threading.get_ident()
            self._playwright = _acquire_driver()
        playwright = self._playwright
        try:
            return launch(playwright, headless=headless) if endpoint is None else connect(playwright, endpoint)
        except BrowserUnavailable:
            self.release()
            raise

    def release(self) -> None:
        """Let go of the driver, stopping it when no other environment on the thread uses it."""
        if self._playwright is not None:
            _release_driver()
            self._playwright = None

    def check_thread(self) -> None:
        current = threading.get_ident()
        if self._thread is not None and self._thread != current and self._playwright is not None:
            raise BrowserThreadError(
                "this BrowserEnvironment's browser was started on another thread; Playwright's sync API "
                "only works on the thread that started it"
            )


def _acquire_driver() -> Playwright:
    """This thread's Playwright driver, started on first use; a second `sync_playwright()` on a
    thread that already runs one fails with "using Playwright Sync API inside the asyncio loop"."""
    if getattr(_drivers, "users", 0) == 0:
        try:
            _drivers.playwright = sync_playwright().start()
        except Error as error:
            raise BrowserUnavailable(
                "Playwright cannot start on this thread, which already runs an asyncio loop or another "
                "Playwright (such as pytest-playwright's fixtures); use a thread of its own "
                f"({first_line(error)})"
            ) from error
        _drivers.users = 0
    _drivers.users += 1
    return _drivers.playwright


def _release_driver() -> None:
    _drivers.users -= 1
    if _drivers.users == 0:
        _drivers.playwright.stop()
        _drivers.playwright = None
