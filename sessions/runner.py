"""Running sessions: create, load, fork, queue commands, and the step loop.

The loop applies queued operator commands at step boundaries, then takes one engine step, and
appends each batch in one transaction. A batch is the unit of durability: after `kill -9` a
session resumes from its last committed batch, and a command is handled exactly once because
its `command_applied` event and its "handled" mark commit together.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.commands import Command, apply_command, parse_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.state import Recorder, RunStatus, SessionState, replay
from sessions.backends import Backend, build_backend, prepare_model
from sessions.store import EventStore, SessionNotFound, StoreError

__all__ = [
    "RunnerBusy",
    "InvalidCommand",
    "create_session",
    "load_state",
    "fork_session",
    "queue_command",
    "Runner",
]

STALE_AFTER = 15.0
"""Seconds without a heartbeat after which a runner is presumed dead and its lease can be taken."""


class RunnerBusy(StoreError):
    """Another live process is running this session."""


class InvalidCommand(ValueError):
    """A command that is not of any documented shape (rejected before it is queued)."""


def create_session(
    store: EventStore,
    task: str,
    model: str,
    *,
    start_url: str | None = None,
    config: EngineConfig | None = None,
    session_id: str | None = None,
    paused: bool = False,
) -> str:
    """Record a new session; it starts running (or paused, for plan review) when a runner picks it up."""
    task = task.strip()
    if not task:
        raise ValueError("the task is empty; describe what the agent should do")
    config = config or EngineConfig()
    session_id = session_id or uuid.uuid4().hex[:12]
    state = SessionState()
    recorder = Recorder(state)
    recorder.record(
        Kind.SESSION_CREATED,
        task=task,
        start_url=start_url,
        model=model,
        model_data=prepare_model(model, store),
        config=config.model_dump(mode="json"),
        status=(RunStatus.PAUSED if paused else RunStatus.RUNNING).value,
    )
    store.create_session(session_id, task, model, recorder.take(), status=state.status.value)
    return session_id


def load_state(store: EventStore, session_id: str, upto: int | None = None) -> SessionState:
    """State at the end of the log, or just after event `upto` (time travel)."""
    return replay(store.load(session_id, upto=upto))


def fork_session(store: EventStore, session_id: str, at: int) -> str:
    """A new session whose history is the first `at` events of another; it starts paused."""
    events = store.load(session_id, upto=at)
    if not events or events[-1].seq != at:
        last = store.session(session_id).last_seq
        raise ValueError(f"session {session_id} has events 1..{last}; cannot fork at {at}")
    state = replay(events)
    new_id = uuid.uuid4().hex[:12]
    recorder = Recorder(state)
    recorder.record(Kind.SESSION_FORKED, from_session=session_id, at_seq=at)
    info = store.session(session_id)
    store.create_session(
        new_id,
        info.task,
        info.model,
        [*events, *recorder.take()],
        status=state.status.value,
        reason=state.reason,
        steps=state.steps,
        parent_id=session_id,
        forked_at=at,
    )
    return new_id


def queue_command(store: EventStore, session_id: str, command: dict[str, Any] | Command) -> str:
    """Validate a command's shape and queue it; the runner decides at the next step boundary."""
    try:
        parsed = parse_command(command) if isinstance(command, dict) else command
    except ValidationError as error:
        details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise InvalidCommand(f"invalid command: {details}") from None
    store.enqueue(session_id, parsed.command_id, parsed.model_dump(mode="json"))
    return parsed.command_id


def _alive(pid: int) -> bool:
    """Whether a runner process on this machine still exists (a killed runner leaves its lease behind)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Runner:
    """Drives one session until it ends, is stopped, or `should_stop()` says so."""

    def __init__(
        self,
        store: EventStore,
        session_id: str,
        backend: Backend | None = None,
        *,
        artifacts: Path | None = None,
        poll: float = 0.1,
        on_events: Callable[[list[Event]], None] | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.state = load_state(store, session_id)
        self.backend = backend or build_backend(self.state, artifacts, session_id)
        self.poll = poll
        self.on_events = on_events
        self.pid = os.getpid()
        self._last_beat = 0.0

    def run(
        self,
        should_stop: Callable[[], bool] = lambda: False,
        on_idle: Callable[[SessionState], bool] | None = None,
    ) -> SessionState:
        """Step until the session ends or is stopped.

        While it is paused or waiting for approval the runner waits for commands; `on_idle`, when
        given, is asked first and may queue commands itself (return True to keep waiting, False to
        leave the loop).
        """
        holder = self.store.session(self.session_id).runner_pid
        stale_after = STALE_AFTER if holder is None or _alive(holder) else -1.0
        if not self.store.claim(self.session_id, self.pid, time.time(), stale_after):
            info = self.store.session(self.session_id)
            raise RunnerBusy(
                f"session {self.session_id} is being run by process {info.runner_pid}; "
                f"send it commands with `python -m sessions command {self.session_id} ...`"
            )
        try:
            self._restore_page()
            engine = Engine(self.state, self.backend.model, self.backend.env, guard=self.backend.guard)
            while not should_stop():
                self._apply_commands()
                state = self.state
                if state.finished or state.status is RunStatus.STOPPED:
                    break
                if state.status is RunStatus.RUNNING:
                    self._persist(engine.step())
                    self._beat()
                elif on_idle is not None and not on_idle(state):
                    break
                else:
                    self._beat()
                    time.sleep(self.poll)
        finally:
            self._close()
        return self.state

    def _restore_page(self) -> None:
        """Put the browser back where the log says the session was (resume, fork, restart)."""
        url = self.state.url
        if url and self.state.steps:
            self.backend.env.goto(url)

    def _apply_commands(self) -> None:
        for queued in self.store.pending(self.session_id):
            command = parse_command(queued.payload)
            events = apply_command(self.state, command)
            self._persist(events, handled=[queued.command_id])

    def _persist(self, events: list[Event], handled: list[str] | None = None) -> None:
        state = self.state
        if events or handled:
            if events:
                self.store.append(
                    self.session_id, events, status=state.status.value, reason=state.reason, steps=state.steps,
                    handled=handled or (),
                )
            if self.on_events is not None and events:
                self.on_events(events)

    def _beat(self) -> None:
        now = time.time()
        if now - self._last_beat > 1.0:
            self.store.heartbeat(self.session_id, self.pid, now)
            self._last_beat = now

    def _close(self) -> None:
        """However the loop ended, leave the log consistent and an unfinished run resumable."""
        try:
            self.state = load_state(self.store, self.session_id)
            if self.state.status is RunStatus.RUNNING:
                recorder = Recorder(self.state)
                recorder.record(Kind.SESSION_STATUS, status=RunStatus.PAUSED.value, reason="runner stopped; resume to continue")
                self._persist(recorder.take())
        except (StoreError, SessionNotFound):
            pass
        finally:
            self.store.release(self.session_id, self.pid)
            self.backend.close()
