"""Finding and launching a Chromium without downloading one, or reaching one that runs elsewhere.

The console runs where `playwright install` may be impossible (offline machines, distro Python),
so a system Chromium is preferred and Playwright's bundled browser is only the fallback. A worker
may instead drive a Chromium on another machine through Playwright's browser server (`connect`), or
serve one of its own to every session it runs (`planner.browser.server`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Error, Playwright

from planner.errors import PlannerError

__all__ = [
    "LAUNCH_ARGS",
    "SYSTEM_CHROMIUMS",
    "BrowserUnavailable",
    "connect",
    "ensure_chromium",
    "find_chromium",
    "launch",
    "launch_args",
]

SYSTEM_CHROMIUMS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")

LAUNCH_ARGS = [
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Quiet, container-friendly flags: no GPU, no /dev/shm reliance, no background traffic."""

_INSTALL_HINT = (
    "install Chromium (`apt-get install chromium`) or Playwright's browser (`playwright install chromium`), "
    "or point CHROMIUM_PATH at a Chromium or Chrome executable"
)


class BrowserUnavailable(PlannerError):
    """No usable Chromium: none installed, or it failed to start. A `PlannerError`, so every front end
    reports its sentence (how to get a browser) instead of a traceback."""


def _bundled_chromium(playwright: Playwright | None) -> str | None:
    if playwright is None:
        return None
    try:
        path = playwright.chromium.executable_path
    except Error:
        return None
    return path if path and Path(path).is_file() else None


def find_chromium(playwright: Playwright | None = None) -> str | None:
    """The Chromium to run: $CHROMIUM_PATH, a system install, then Playwright's bundled browser.

    Playwright's own browser is only known through a running `playwright`; without one it is skipped.
    """
    configured = os.environ.get("CHROMIUM_PATH")
    if configured:
        return configured if Path(configured).is_file() else None
    for candidate in SYSTEM_CHROMIUMS:
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return _bundled_chromium(playwright)


def launch_args() -> list[str]:
    """Chromium refuses to run its sandbox as root (common in containers), so only then drop it."""
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [*LAUNCH_ARGS, "--no-sandbox"] if as_root else list(LAUNCH_ARGS)


def launch(playwright: Playwright, headless: bool = True) -> Browser:
    """Launch Chromium, or raise `BrowserUnavailable` saying how to get one."""
    executable = find_chromium(playwright)
    if executable is None:
        configured = os.environ.get("CHROMIUM_PATH")
        where = f"CHROMIUM_PATH={configured} is not a file; " if configured else "no Chromium found; "
        raise BrowserUnavailable(where + _INSTALL_HINT)
    try:
        return playwright.chromium.launch(executable_path=executable, headless=headless, args=launch_args())
    except Error as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise BrowserUnavailable(f"Chromium at {executable} failed to start: {first_line}") from error


def connect(playwright: Playwright, endpoint: str, timeout_ms: float = 30_000) -> Browser:
    """A Chromium served by a Playwright browser server (`launchServer`, or `playwright launch-server
    --browser chromium`) at a ws:// address, or `BrowserUnavailable` saying what went wrong.

    The message names only the server's scheme, host and port: a browser server's path is its
    access token, and this sentence may end up in a session's log as the reason it paused."""
    parts = urlsplit(endpoint)
    shown_at = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "the given address"
    if parts.scheme not in ("ws", "wss") or not parts.netloc:
        raise BrowserUnavailable(
            f"the browser endpoint must be a ws:// or wss:// address (a Playwright browser server), not {shown_at}"
        )
    try:
        return playwright.chromium.connect(endpoint, timeout=timeout_ms)
    except Error as error:
        lines = str(error).strip().splitlines()
        problem = lines[0] if lines else type(error).__name__
        raise BrowserUnavailable(
            f"cannot reach the browser server at {shown_at} ({problem.replace(endpoint, shown_at)[:200]}); "
            "check that it runs and that its Playwright version is this one's"
        ) from error


def ensure_chromium() -> str:
    """Find a Chromium, installing one only when none exists; used by `make run` and `make test`.

    A system package needs root, so apt is used only when running as root on a Debian-like system;
    everyone else gets Playwright's own download into their home directory.
    """
    found = find_chromium()
    if found:
        return found
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        bundled = _bundled_chromium(playwright)
    if bundled:
        return bundled
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if as_root and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True)
    else:
        subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=True)
    with sync_playwright() as playwright:
        found = find_chromium(playwright)
    if not found:
        raise BrowserUnavailable("installing Chromium did not produce a usable browser; " + _INSTALL_HINT)
    return found


if __name__ == "__main__":
    print(f"chromium: {ensure_chromium()}")
