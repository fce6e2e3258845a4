"""Run the `python -m sessions` CLI as a separate process, as a user or another tool would.

Every wait here ends in an assertion that says what it waited for: on a loaded machine a
deadline that runs out must fail with that sentence, never fall through to an IndexError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_S = 120.0
"""How long a test waits for a runner process; generous, since the machine may be busy."""

T = TypeVar("T")


def cli(
    *args: str, check: bool = True, timeout: float = DEADLINE_S, program: str = "sessions"
) -> subprocess.CompletedProcess[str]:
    """`python -m sessions ARGS` (or `python -m demo ARGS`) as a process of its own."""
    try:
        result = subprocess.run(
            [sys.executable, "-m", program, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"`python -m {program} {' '.join(args)[:200]}` did not finish within {timeout:g} s"
        ) from None
    if check and result.returncode not in (0, 1, 3):  # 3: paused with --exit-on-pause
        raise AssertionError(f"exit {result.returncode}: {result.stderr}")
    return result


def last_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = result.stdout.strip().splitlines()
    assert lines, f"no JSON on stdout (exit {result.returncode}); stderr: {result.stderr[-1000:]}"
    return json.loads(lines[-1])


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sessions", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def finish(process: subprocess.Popen[str], what: str, timeout: float = DEADLINE_S) -> tuple[str, str]:
    """Wait for a spawned CLI process to exit; (stdout, stderr). Fails naming `what` if it does not."""
    try:
        return process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"gave up after {timeout:g} s waiting for {what}; its stderr: {err[-1000:]}") from None


def session_status(db: str, session_id: str) -> str | None:
    """The listed status of one session, or None while it does not exist yet."""
    listed = last_json(cli("list", "--db", db))["sessions"]
    return next((s["status"] for s in listed if s["session_id"] == session_id), None)


def command(db: str, session_id: str, *verb: str) -> dict[str, Any]:
    """Queue an operator command and wait (up to the deadline) for the runner's answer: its outcome JSON."""
    return last_json(cli("command", session_id, "--db", db, "--wait", "--timeout", f"{DEADLINE_S:g}", *verb))


def start_fleet(
    *args: str, port: int | None = None, shop_port: int | None = None
) -> tuple[subprocess.Popen[str], list[str], threading.Thread]:
    """`python -m sessions.worker.fleet ARGS` (on free ports unless given), the lines it prints as they come,
    and the thread reading them (joined once the fleet has exited, every line is in)."""
    from ui.server import free_port

    fleet = subprocess.Popen(
        [
            *(sys.executable, "-m", "sessions.worker.fleet", *args),
            *("--port", str(port or free_port()), "--shop-port", str(shop_port or free_port())),
        ],
        cwd=ROOT,
        env={**os.environ, "ANDOR_SHOP_PORT": str(free_port()), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(fleet.stdout or ()), daemon=True)
    reader.start()
    return fleet, lines, reader
