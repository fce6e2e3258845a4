"""Waiting in the tests: one `wait_until` for every file.

Every wait ends in an assertion that names what it waited for, so a test that times out says which
promise the product broke instead of failing somewhere later. `pump` is what passes the time between
two looks: a sleep by default, or a call that lets a browser's events through (a Playwright page
handles its events only while this thread calls into it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_until"]

T = TypeVar("T")


def wait_until(
    check: Callable[[], T], what: str, *, timeout: float = 30.0, pump: Callable[[], object] | None = None
) -> T:
    """Look at `check` until it returns something truthy, and return that; fail naming `what` once
    `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"gave up after {timeout:g} s waiting for {what}"
        if pump is None:
            time.sleep(0.05)
        else:
            pump()
    return value
