"""One Chromium for all of a worker's browser sessions: a Playwright browser server it starts itself.

A worker running many sessions would otherwise launch a Chromium per session. `BrowserServer` runs
`playwright launch-server` on loopback, and each session connects to it and works in a browser
context of its own (its own cookies, storage and pages, closed when its connection closes): a
context costs a renderer, where a Chromium costs its browser, GPU and utility processes too
(docs/benchmarks.md, "Fleet capacity").

The server is started when the first session needs it, and again when it cannot be reached (its
Chromium died). It runs under a launcher (`python -m planner.browser.server`) that stops it when
the worker's end of its stdin closes, so a worker killed with SIGKILL leaves no Chromium behind. The
server's address holds its access token; it is kept from command lines and logs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from types import FrameType

from playwright.sync_api import Browser, Error, Playwright

from planner.browser.chromium import BrowserUnavailable, connect, find_chromium, launch_args
from planner.browser.failures import first_line

__all__ = ["BrowserEndpoint", "BrowserServer"]

START_SECONDS = 60.0
"""How long the server may take to print its address, and to stop."""


class BrowserServer:
    """A shared Chromium behind a Playwright browser server; safe to use from many threads."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._endpoint = ""
        self._generation = 0
        """How many servers have been started: a failed connection restarts the one it tried, not a newer one."""
        self._lock = threading.Lock()

    def endpoint(self) -> str:
        """The running server's ws:// address, starting it first if needed; `BrowserUnavailable` when it cannot start."""
        with self._lock:
            self._ensure()
            return self._endpoint

    def connect(self, playwright: Playwright) -> Browser:
        """A connection of the caller's own (its contexts close with it), to a Chromium that can open a
        context. A server that cannot give one is replaced once by a new one: Playwright's server
        outlives a Chromium that died, and may even accept connections to it for a while."""
        with self._lock:
            self._ensure()
            endpoint, generation = self._endpoint, self._generation
        try:
            return _usable(connect(playwright, endpoint))
        except BrowserUnavailable:
            with self._lock:
                if generation == self._generation:
                    self._stop()
                self._ensure()
                endpoint = self._endpoint
            return _usable(connect(playwright, endpoint))

    def stop(self) -> None:
        """Stop the server and its Chromium (every session's context with it)."""
        with self._lock:
            self._stop()

    def _ensure(self) -> None:
        if self._process is None or self._process.poll() is not None:
            self._endpoint = self._start()
            self._generation += 1

    def _start(self) -> str:
        executable = find_chromium()
        if executable is None:
            raise BrowserUnavailable("no Chromium found for the shared browser; install Chromium or set CHROMIUM_PATH")
        options = {"executablePath": executable, "args": launch_args(), "headless": True, "host": "127.0.0.1"}
        process = subprocess.Popen(
            [sys.executable, "-m", "planner.browser.server", json.dumps(options)],
            stdin=subprocess.PIPE,  # its lifeline: closed when this process ends, however it ends
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stderr is not None
        first = _first_line_within(process.stdout, START_SECONDS)
        if not first.startswith("ws://"):
            process.kill()
            process.wait()
            problem = process.stderr.read().strip().splitlines() or [first or "no address within a minute"]
            raise BrowserUnavailable(f"the shared Chromium at {executable} did not start: {problem[-1][:200]}")
        threading.Thread(target=process.stderr.read, name="browser-server-stderr", daemon=True).start()
        self._process = process
        return first

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(START_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


BrowserEndpoint = str | BrowserServer
"""Where a session's browser comes from instead of a Chromium of its own: a Playwright browser
server's ws:// address, or the worker's shared one."""


def _usable(browser: Browser) -> Browser:
    """`browser` once it has opened and closed a context; else closed, and `BrowserUnavailable`."""
    try:
        browser.new_context().close()
    except Error as error:
        with contextlib.suppress(Error):
            browser.close()
        raise BrowserUnavailable(f"the shared Chromium cannot open a context: {first_line(error)}") from error
    return browser


def _first_line_within(stream: object, seconds: float) -> str:
    """The first line a text pipe gives within `seconds`, stripped; "" when none came."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)  # type: ignore[attr-defined]
    reader.start()
    reader.join(seconds)
    return lines[0].strip() if lines else ""


def _serve(options: str) -> int:
    """The launcher: `playwright launch-server` in a process group of its own, its address relayed on
    stdout, stopped (SIGTERM: Playwright closes its Chromium) on SIGTERM, when stdin closes, or when
    this launcher fails (the worker gone before the address is relayed: a broken pipe)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="andor-browser-server-") as config:
        config.write(options)
        config.flush()
        server = subprocess.Popen(
            [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium", "--config", config.name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # the CLI runs the driver: both get the signal
        )

        def stop(signum: int = signal.SIGTERM, frame: FrameType | None = None) -> None:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)

        try:
            assert server.stdout is not None
            address = server.stdout.readline().strip()  # read the config by now
        except BaseException:
            stop()
            raise
    try:
        signal.signal(signal.SIGTERM, stop)
        print(address, flush=True)
        threading.Thread(target=lambda: _until_closed(0, stop), name="lifeline", daemon=True).start()
        return server.wait()
    finally:
        stop()


def _until_closed(fd: int, then: Callable[[], None]) -> None:
    while os.read(fd, 4096):
        pass
    then()


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
