"""Running a session: the step loop under a lease (creating sessions and queuing commands is the client's part).

The loop applies queued operator commands at step boundaries, then takes one engine step, and
appends each batch in one transaction. A batch is the unit of durability: after `kill -9` a
session resumes from its last committed batch, and a command is handled exactly once because
its `command_applied` event and its "handled" mark commit together.

Exactly one runner drives a session. It claims the store's lease (a compare-and-set that returns
a generation, the fencing token) and every write it makes carries that generation, so once the
lease moves on the store refuses the old runner's writes. A heartbeat thread keeps the lease alive
through long model calls and browser actions, and the model and browser are fenced: no call starts
once the lease is lost or its heartbeat has gone quiet, so a runner that lost its lease stops
before touching the browser again.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from planner.commands import (
    ActionCheck,
    apply_command,
    describe_command_error,
    parse_command,
    sender,
)
from planner.engine import Engine
from planner.events import Cause, Event, Kind
from planner.protocols import Environment, Model
from planner.state import Recorder, RunStatus, SessionState, replay
from sessions.backends import (
    Backend,
    build_backend,
)
from sessions.store import STALE_AFTER, EventStore, LeaseLost, QueuedCommand, StoreError
from sessions.store.artifacts import ArtifactStore, artifact_store

if TYPE_CHECKING:
    from planner.browser.server import BrowserEndpoint

__all__ = [
    "Lease",
    "Runner",
    "RunnerBusy",
]

_log = logging.getLogger(__name__)


_SESSION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class RunnerBusy(StoreError):
    """Another live runner is running this session (its place in the tree: `sessions.errors`)."""


def _alive(pid: int) -> bool:
    """Whether a runner process on this machine still exists (a killed runner leaves its lease behind)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder_gone(owner: str) -> bool:
    """Whether a lease owner token ("host:pid:tag") names a process on this machine that has exited.
    Holders on other machines are presumed alive until their heartbeat goes stale."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return host == socket.gethostname() and pid.isdigit() and not _alive(int(pid))


class Lease:
    """A runner's claim on one session, kept alive by its own heartbeat thread.

    The thread beats every `stale_after / 5` seconds whatever the runner is doing (a 50 s model
    call included). `check` refuses once the store said the lease moved on, or once no beat has
    reached the store for `stale_after / 2` seconds, well before another runner may take it.
    """

    def __init__(self, store: EventStore, session_id: str, generation: int, stale_after: float) -> None:
        self.store = store
        self.session_id = session_id
        self.generation = generation
        self.stale_after = stale_after
        self._last_beat = time.monotonic()
        self._lost: str | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{session_id}", daemon=True)

    @property
    def lost(self) -> bool:
        return self._lost is not None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(self.stale_after)

    def beaten(self, at: float) -> None:
        """A fenced write that began at `at` (monotonic) went through: it refreshed the lease's
        heartbeat in the store too. A runner busy writing step after step may keep the database so
        busy that its heartbeat thread waits for the lock; its own writes then keep it alive."""
        self._last_beat = max(self._last_beat, at)

    def lose(self, reason: str) -> None:
        """Record that a write was refused: the lease is gone for good."""
        self._lost = self._lost or reason

    def check(self) -> None:
        """Raise `LeaseLost` unless this runner may still act for the session."""
        if self._lost is not None:
            raise LeaseLost(self._lost)
        quiet = time.monotonic() - self._last_beat
        if quiet > self.stale_after / 2:
            raise LeaseLost(
                f"session {self.session_id}: no heartbeat reached the store for {quiet:.1f} s; "
                "this runner stops before another one may take over"
            )

    def release(self) -> None:
        if self._lost is None:
            self.store.release(self.session_id, self.generation)

    def _beat(self) -> None:
        while not self._stopping.wait(self.stale_after / 5):
            started = time.monotonic()
            try:
                self.store.heartbeat(self.session_id, self.generation, time.time())
            except LeaseLost as lost:
                self.lose(str(lost))
                return
            except StoreError as error:  # a passing database error; `check` refuses if it lasts
                _log.warning("session %s: heartbeat failed: %s", self.session_id, error)
                continue
            self._last_beat = started


class _Fenced:
    """A model or environment behind the lease: every call but `close` checks the lease first, so
    nothing reaches the model or the browser once another runner may own the session.
    Arguments pass through untouched (`execute(action, approved=True)` included)."""

    __slots__ = ("_calls", "_inner", "_lease")

    def __init__(self, inner: object, lease: Lease) -> None:
        self._inner = inner
        self._lease = lease
        self._calls: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "close" or name.startswith("_") or not callable(value):
            return value
        call = self._calls.get(name)
        if call is None:
            check = self._lease.check

            def call(*args: Any, **kwargs: Any) -> Any:
                check()
                return value(*args, **kwargs)

            self._calls[name] = call
        return call


class Runner:
    """Drives one session until it ends, is stopped, or `should_stop()` says so."""

    def __init__(
        self,
        store: EventStore,
        session_id: str,
        backend: Backend | None = None,
        *,
        artifacts: ArtifactStore | Path | None = None,
        poll: float = 0.1,
        on_events: Callable[[list[Event]], None] | None = None,
        stale_after: float = STALE_AFTER,
        browser_endpoint: BrowserEndpoint | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.state = _raw_state(store, session_id)
        remote = {"browser_endpoint": browser_endpoint} if browser_endpoint is not None else {}
        self.backend = backend or build_backend(self.state, artifact_store(artifacts), session_id, **remote)
        self.poll = poll
        self.on_events = on_events
        self.stale_after = stale_after
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lease: Lease | None = None
        self._seen_order = 0
        """Every command with an order number up to this one has been handled by this runner."""
        self._last_order: int | None = None
        """The queue's newest order number as the last append saw it; None once a boundary used it."""
        self._check_action: ActionCheck | None = None
        """The page's own action check, once a run has a browser: an operator's edited action is refused
        when the page could not run it."""
        self._fresh = True
        """`state` is the fold of the stored log made by `__init__`: a run need only catch up with it."""

    def run(
        self,
        should_stop: Callable[[], bool] = lambda: False,
        on_idle: Callable[[SessionState], bool] | None = None,
        *,
        claimed: int | None = None,
        hand_over: bool = False,
    ) -> SessionState:
        """Step until the session ends or is stopped.

        While it is paused or waiting for approval the runner waits for commands; `on_idle`, when
        given, is asked first and may queue commands itself (return True to keep waiting, False to
        leave the loop). Raises `RunnerBusy` when another runner holds the session, and `LeaseLost`
        when another runner took it over during the run (this one then stopped without touching it).

        `claimed` is a lease generation already taken for this session (a worker's
        `claim_runnable`); without it the runner claims the session itself. With `hand_over`, a run
        that `should_stop` ends leaves the session running, for another runner to pick up, instead
        of pausing it (a worker shutting down).
        """
        try:
            lease = self._lease = self._claim() if claimed is None else self._lease_for(claimed)
        except StoreError:
            self.backend.close()
            raise
        failure: Exception | None = None
        clean = False
        try:
            lease.start()
            self._catch_up()  # another runner may have moved it on
            model = cast(Model, _Fenced(self.backend.model, lease))
            env = cast(Environment, _Fenced(self.backend.env, lease))
            self._restore_page(env)
            engine = Engine(self.state, model, env, guard=self.backend.guard)
            self._check_action = env.check
            while not should_stop():
                lease.check()
                self._apply_commands()
                state = self.state
                if state.finished or state.status is RunStatus.STOPPED:
                    break
                if state.status is RunStatus.RUNNING:
                    self._persist(engine.step())
                elif on_idle is not None and not on_idle(state):
                    break
                else:
                    time.sleep(self.poll)
            if self.state.finished:
                self._apply_commands()  # queued before the end: rejected with the reason, never left pending
            clean = True
        except Exception as error:
            failure = error
            raise
        finally:
            self._close(lease, failure, clean, hand_over)
        return self.state

    def _claim(self) -> Lease:
        generation = self.store.claim(
            self.session_id, self.owner, time.time(), self.stale_after, gone=_holder_gone, pid=os.getpid()
        )
        if generation is None:
            info = self.store.session(self.session_id)
            host = (info.lease_owner or "").partition(":")[0]
            raise RunnerBusy(
                f"session {self.session_id} is being run by process {info.runner_pid}"
                + (f" on {host}" if host and host != socket.gethostname() else "")
                + f"; send it commands with `python -m sessions command {self.session_id} ...`"
            )
        return self._lease_for(generation)

    def _lease_for(self, generation: int) -> Lease:
        return Lease(self.store, self.session_id, generation, self.stale_after)

    def _restore_page(self, env: Environment) -> None:
        """Put the browser back where the log says the session was (resume, fork, restart)."""
        url = self.state.url
        if url and self.state.steps:
            env.goto(url)

    def _catch_up(self) -> None:
        """Fold what was appended since `__init__` read the log (the whole log again on a later run,
        whose engine may have left `state` ahead of what was stored)."""
        if self._fresh:
            self._fresh = False
            replay(self.store.load(self.session_id, after=self.state.seq), self.state)
        else:
            self.state = _raw_state(self.store, self.session_id)

    def _apply_commands(self) -> None:
        """Handle queued commands at a step boundary. While running, the append just before this
        boundary read the queue's newest order number in its own transaction: when this runner has
        handled that one, nothing is queued and the queue is not read. Anything queued after that
        transaction is linearised after this boundary, and is seen at the next one."""
        last_order, self._last_order = self._last_order, None
        if self.state.status is RunStatus.RUNNING and last_order is not None and last_order <= self._seen_order:
            return
        queued_before = last_order or 0
        for queued in self.store.pending(self.session_id):
            self._persist(self._decide(queued), handled=[queued.command_id])
            queued_before = max(queued_before, queued.order)
        self._seen_order = max(self._seen_order, queued_before)

    def _decide(self, queued: QueuedCommand) -> list[Event]:
        """Apply or reject one queued command; one that cannot be read is rejected, never retried,
        so it cannot block the commands behind it."""
        if queued.problem is None:
            try:
                return apply_command(self.state, parse_command(queued.payload), self._check_action)
            except ValidationError as error:
                problem = describe_command_error(error)
        else:
            problem = queued.problem
        recorder = Recorder(self.state)
        recorder.record(
            Kind.COMMAND_REJECTED,
            None,
            command_id=queued.command_id,
            by=sender(queued.payload),
            command=queued.payload,
            reason=f"the stored command cannot be read ({problem}); send it again",
        )
        return recorder.take()

    def _persist(self, events: list[Event], handled: list[str] | None = None) -> None:
        """Append a batch, the listing's row with it. The row is what lists show, so its reason is masked,
        and a batch that finds a secret the task spells out masks the row's task too (the log keeps the
        task as it was, for the runs that read it)."""
        if not events:
            return
        state = self.state
        assert self._lease is not None, "a runner writes only under its lease"
        task = None
        if any(e.kind is Kind.SECRET_FOUND for e in events):
            task = state.secrets.mask(state.task)
            task = task if task != state.task else None
        started = time.monotonic()
        try:
            self._last_order = self.store.append(
                self.session_id,
                events,
                status=state.status.value,
                cause=_cause(state),
                reason=_shown(state, state.reason),
                task=task,
                steps=state.steps,
                cost_usd=state.metrics.cost_usd,
                handled=handled or (),
                lease=self._lease.generation,
                beat=time.time(),
            )
        except LeaseLost as lost:
            self._lease.lose(str(lost))
            raise
        self._lease.beaten(started)
        if self.on_events is not None:
            self.on_events(events)

    def _close(self, lease: Lease, failure: Exception | None, clean: bool, hand_over: bool = False) -> None:
        """However the loop ended, leave the log consistent and an unfinished run resumable: paused,
        with the reason it stopped (or, on a clean stop with `hand_over`, running for the next
        runner). A runner that lost its lease writes nothing more. After an exception the state is
        read back from the log, since the engine may have changed it without storing the change;
        after a `clean` end everything it changed was stored."""
        try:
            lease.stop()
            if lease.lost or isinstance(failure, LeaseLost):
                return
            try:
                if not clean:
                    self.state = _raw_state(self.store, self.session_id)
                if self.state.status is RunStatus.RUNNING and not (clean and hand_over):
                    recorder = Recorder(self.state)
                    recorder.record(
                        Kind.SESSION_STATUS,
                        status=RunStatus.PAUSED.value,
                        cause=Cause.INTERRUPTED if failure is None else Cause.ERROR,
                        reason=_stop_reason(failure),
                    )
                    self._persist(recorder.take())
            except StoreError as error:
                _log.warning("session %s: could not record how the run stopped: %s", self.session_id, error)
            try:
                lease.release()
            except StoreError as error:  # the lease then expires after `stale_after`
                _log.warning("session %s: could not release the runner lease: %s", self.session_id, error)
        finally:
            self.backend.close()


def _raw_state(store: EventStore, session_id: str) -> SessionState:
    """The state of the raw log: a runner acts on the secrets' values (`sessions.store.reading` masks them)."""
    return replay(store.load(session_id))


def _shown(state: SessionState, text: str | None) -> str | None:
    """`text` as the listing may show it: every secret the session has masked."""
    return state.secrets.mask(text) if text is not None else None


def _cause(state: SessionState) -> str | None:
    """The state's cause as the store's listing keeps it."""
    return state.cause.value if state.cause is not None else None


def _stop_reason(failure: Exception | None) -> str:
    """Why a run stopped, for the operator: the exception's own first line (its type when it has none)."""
    if failure is None:
        return "runner stopped; resume to continue"
    lines = str(failure).strip().splitlines()
    return lines[0][:300] if lines else type(failure).__name__
