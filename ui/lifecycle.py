"""What the console does when its process exits, in the order that lets runners pause cleanly.

Runners must pause their sessions while the interpreter can still run them. `threading` runs its own
exit hooks (where `concurrent.futures` stops the executors Playwright needs) before `atexit`'s, so a
runner stopped from `atexit` would fail mid-action instead of pausing. The only way in before them is
`threading._register_atexit`, which is private: this module is the one place that uses it, and
`tests/test_lifecycle.py` pins that it exists and runs before `atexit`.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

__all__ = ["at_exit", "before_threads_stop"]


def before_threads_stop(hook: Callable[[], object]) -> None:
    """Run `hook` at exit before `threading` stops executors (and so before every `at_exit` hook)."""
    register: Callable[[Callable[[], object]], None] = threading._register_atexit  # type: ignore[attr-defined]
    register(hook)


def at_exit(hook: Callable[[], object]) -> None:
    """Run `hook` at exit, after the runners have paused their sessions."""
    atexit.register(hook)
