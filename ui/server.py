"""Start the console as its own `streamlit run app.py` process (end-to-end tests and benchmarks)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ConsoleProcess", "free_port", "start_console"]

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ConsoleProcess:
    url: str
    db: Path | str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        """SIGTERM, as an operator's Ctrl-C would: running sessions are left paused."""
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_console(db: Path | str, timeout: float = 60.0, env: Mapping[str, str] | None = None) -> ConsoleProcess:
    """A console on free ports with its own database (a file, or a postgresql:// URL) and demo shop;
    returns once it answers. It runs sessions as `$ANDOR_RUNNER` says (`sessions.worker.pool.runners_for`).
    `env` adds to (or overrides) the environment it inherits: `ANDOR_AUTH_HEADER`, `ANDOR_ROLES`, ..."""
    port = free_port()
    env = {
        **os.environ,
        "ANDOR_DB": str(db),
        "ANDOR_SHOP": "1",
        "ANDOR_SHOP_PORT": str(free_port()),
        "PYTHONPATH": str(ROOT),
        **(env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    with open(os.environ.get("ANDOR_CONSOLE_LOG", os.devnull), "ab") as log:  # the child keeps its own copy
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return ConsoleProcess(url, db, process)
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the console did not answer on {url} within {timeout:g} s")
