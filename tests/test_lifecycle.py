"""The console's exit order rests on a private `threading` hook (`ui.lifecycle`): pinned here, so a Python
that drops or reorders it fails a test instead of leaving sessions half-run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_hook_before_threads_stop_runs_before_at_exit_hooks_and_while_executors_still_run() -> None:
    code = """
from concurrent.futures import ThreadPoolExecutor
from ui.lifecycle import at_exit, before_threads_stop

pool = ThreadPoolExecutor(1)
pool.submit(lambda: None).result()
before_threads_stop(lambda: print("before", pool.submit(lambda: "executor ran").result(), flush=True))
at_exit(lambda: print("after", flush=True))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["before executor ran", "after"], (
        f"the exit hooks ran as {done.stdout!r}: the runners would pause after the executors stopped"
    )
