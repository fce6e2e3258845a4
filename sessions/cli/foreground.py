"""Running a session in this process (`run`, `resume`): the worker side's `Runner`, in the foreground.

This process holds the session's lease until the run ends; Ctrl-C or SIGTERM ends it at the next
step boundary and leaves it paused, so it can be resumed. When the session pauses by itself one
stderr line says why and which command continues it; what is printed is masked with the runner's
own secrets (`planner.secrets`), since its state holds their values.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from planner.inputs import shown
from sessions.cli.context import artifacts
from sessions.cli.conventions import EXIT_FAILED, EXIT_OK, EXIT_PAUSED, PROG, emit

if TYPE_CHECKING:
    import argparse

    from planner.state import SessionState
    from sessions.store import EventStore

__all__ = ["drive", "run_summary", "stop_on_signals"]


def drive(store: EventStore, session_id: str, args: argparse.Namespace) -> int:
    """Run a session in this process until it ends; Ctrl-C or SIGTERM leaves it paused."""
    from planner.state import RunStatus
    from sessions.worker.runner import Runner

    stopping = threading.Event()
    notice = _PauseNotice(session_id, args.db, args.exit_on_pause)
    print(f"session {session_id}", file=sys.stderr, flush=True)
    with stop_on_signals(stopping.set):
        runner = Runner(store, session_id, artifacts=artifacts(args))
        state = runner.run(should_stop=stopping.is_set, on_idle=notice)
    emit(run_summary(session_id, state))
    if state.status is RunStatus.SUCCEEDED:
        return EXIT_OK
    return EXIT_PAUSED if notice.left and not state.finished else EXIT_FAILED


def run_summary(session_id: str, state: SessionState) -> dict[str, Any]:
    """What a finished or paused run reports: the JSON a script reads after `run`, `resume` or a demo run.
    The runner's state holds the secrets' values (`planner.secrets`); what is printed has them masked."""
    mask = state.secrets.mask
    return {
        "session_id": session_id,
        "status": state.status.value,
        "final_answer": mask(state.final_answer) if state.final_answer is not None else None,
        "steps": state.steps,
        "reason": mask(state.reason) if state.reason is not None else None,
    }


@contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C and SIGTERM end the run at the next step boundary (it stays resumable); handlers are
    restored afterwards, and only the main thread can install them (tests call `main` from threads)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, lambda *_: stop()) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _PauseNotice:
    """The runner's `on_idle` hook: one stderr line per pause, and with `--exit-on-pause` the end of the wait."""

    def __init__(self, session_id: str, db: str | None, exit_on_pause: bool) -> None:
        self.session_id = session_id
        self.db = db
        self.exit_on_pause = exit_on_pause
        self.left = False
        self._last: tuple[object, ...] | None = None

    def __call__(self, state: SessionState) -> bool:
        approval = state.approval.node_id if state.approval is not None else None
        key = (state.status, state.reason, state.steps, approval)
        if key != self._last:  # a rejected command while paused changes nothing worth repeating
            self._last = key
            notice = state.secrets.mask(_pause_notice(state, self.session_id, self.db, self.exit_on_pause))
            print(notice, file=sys.stderr, flush=True)
        self.left = self.exit_on_pause
        return not self.exit_on_pause


def _pause_notice(state: SessionState, session_id: str, db: str | None, detached: bool) -> str:
    """One line that says why a session waits and which command continues it.

    `detached`: this process is leaving (`--exit-on-pause`), so the session continues only when a
    runner is started again (`resume ID --exit-on-pause`, so a script keeps its mode); otherwise
    this process is the runner, and a queued command is enough.
    """
    from planner.state import RunStatus

    if detached:
        resume = _cli_line("resume", session_id, "--exit-on-pause", db=db)
    else:
        resume = _cli_line("command", session_id, "resume", db=db)
    then = f" && {resume}" if detached else ""
    approval = state.approval
    if state.status is RunStatus.AWAITING_APPROVAL and approval is not None:
        approve = _cli_line("command", session_id, "approve", db=db)
        return (
            f"session {session_id} waits for approval of '{shown(approval.action, 60)}' at {approval.node_id} "
            f"({shown(approval.rule, 60)}); approve it with: {approve}{then} (or use reject, or edit-action)"
        )
    spent = state.over_budget
    if spent is not None:
        cap = float(state.config.max_cost_usd or 0.0)
        raised = min(10_000.0, max(2 * cap, 2 * state.metrics.cost_usd))
        budget = _cli_line("command", session_id, "budget", "--max-cost", f"{raised:.4g}", db=db)
        return f"session {session_id} paused ({spent}); continue with: {budget} && {resume}"
    why = shown(state.reason, 120) if state.reason else "it was created paused"
    return f"session {session_id} paused ({why}); continue with: {resume}"


def _cli_line(*words: str, db: str | None) -> str:
    """A command line a person can paste: quoted where the shell needs it, with the same --db but
    never its password (`sessions.store.sql.without_password`)."""
    from sessions.store.sql import without_password

    return " ".join([PROG, *map(shlex.quote, words), *(["--db", shlex.quote(without_password(db))] if db else [])])
