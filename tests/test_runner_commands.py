"""No command is silently lost, and the runner always says why it stopped (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import MECHANICS

from planner.browser.dry import DRY_START, DryEnvironment
from planner.events import Kind
from planner.models.scripted import Script, ScriptedModel
from planner.protocols import ActionResult
from sessions.backends import Backend
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store import SessionFinished
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner

TASK = "open two pages"
SCRIPT = Script.model_validate(
    {
        "nodes": {
            TASK: {"type": "AND", "children": ["first", "second"]},
            "first": {"type": "ACTION", "action": "click [1]"},
            "second": {"type": "ACTION", "action": "click [2]"},
        },
        "final_answer": "done",
    }
)


def _session(store: SqlStore, session_id: str = "s", paused: bool = False) -> str:
    return create_session(
        store, TASK, "demo", start_url=DRY_START, config=MECHANICS, session_id=session_id, paused=paused
    )


def _handled(store: SqlStore, session_id: str) -> dict[str, tuple[str, str | None]]:
    return {
        e.payload.command_id: (e.kind.value, getattr(e.payload, "reason", None))
        for e in store.load(session_id)
        if e.kind in (Kind.COMMAND_APPLIED, Kind.COMMAND_REJECTED)
    }


def test_a_command_for_an_ended_session_is_refused_with_what_to_do(store: SqlStore) -> None:
    _session(store)
    Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), DryEnvironment())).run()
    last = store.session("s").last_seq
    with pytest.raises(SessionFinished) as refused:
        queue_command(store, "s", {"kind": "pause"})
    assert str(refused.value) == (
        f"session s has ended (succeeded); commands cannot change it — fork it to continue: "
        f"python -m sessions fork s --at {last}"
    )
    assert store.pending("s") == []


class _LateOperator:
    """The store as the runner sees it, with an operator who queues a command right after the
    runner's last look at the queue before the session ends: the append that records the root's
    success reads the queue (the runner then skips reading it at the next boundary), and the step
    after it ends the session."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.command_id = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def append(self, session_id: str, events: list[Any], **options: Any) -> Any:
        last_order = self.store.append(session_id, events, **options)
        root_succeeded = any(e.node_id == "0" and getattr(e.payload, "status", None) == "SUCCESS" for e in events)
        if root_succeeded and not self.command_id:
            self.command_id = queue_command(self.store, session_id, {"kind": "prune", "node": "0.2", "reason": "late"})
        return last_order


def test_a_command_queued_just_before_the_end_is_rejected_not_lost(store: SqlStore) -> None:
    """Even when the runner is told to stop (Ctrl-C, console shutdown) right as the session ends."""
    _session(store)
    late = _LateOperator(store)
    backend = Backend(ScriptedModel(SCRIPT), DryEnvironment())
    runner = Runner(late, "s", backend=backend)  # type: ignore[arg-type]
    state = runner.run(should_stop=lambda: runner.state.finished)
    assert state.status.value == "succeeded"
    assert late.command_id, "the test never queued its late command"
    assert store.pending("s") == [], "the late command was left in the queue, never to be applied"
    assert _handled(store, "s")[late.command_id] == (
        "command_rejected",
        "the session has ended (succeeded); fork it to continue",
    )


def test_an_unreadable_stored_command_is_rejected_and_later_ones_apply(store: SqlStore) -> None:
    _session(store, paused=True)
    store.enqueue("s", "from-a-newer-version", {"kind": "warp", "command_id": "from-a-newer-version"})
    store.enqueue("s", "no-node", {"kind": "prune", "command_id": "no-node"})
    resume = queue_command(store, "s", {"kind": "resume"})
    state = Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), DryEnvironment())).run()
    assert state.status.value == "succeeded"
    handled = _handled(store, "s")
    assert handled["from-a-newer-version"][0] == "command_rejected"
    assert handled["from-a-newer-version"][1].startswith("the stored command cannot be read (")
    assert "'warp'" in handled["from-a-newer-version"][1]
    assert handled["no-node"][0] == "command_rejected" and "node: is required" in handled["no-node"][1]
    assert handled[resume] == ("command_applied", None)
    assert store.pending("s") == []


class _CrashingBrowser(DryEnvironment):
    def execute(self, action: str, **options: Any) -> ActionResult:
        raise RuntimeError("Target page, context or browser has been closed\nCall log:\n  - waiting for locator")


def test_an_adapter_exception_is_the_reason_the_session_paused(store: SqlStore) -> None:
    _session(store)
    with pytest.raises(RuntimeError, match="browser has been closed"):
        Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), _CrashingBrowser())).run()
    info = store.session("s")
    assert (info.status, info.reason) == ("paused", "Target page, context or browser has been closed")
    assert info.lease_owner is None, "the lease is released for the next resume"


class _Silent(Exception):
    pass


class _SilentBrowser(DryEnvironment):
    def execute(self, action: str, **options: Any) -> ActionResult:
        raise _Silent()


def test_an_exception_without_a_message_is_named_by_its_type(store: SqlStore) -> None:
    _session(store)
    with pytest.raises(_Silent):
        Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), _SilentBrowser())).run()
    assert store.session("s").reason == "_Silent"


def test_a_stopped_runner_says_so(store: SqlStore) -> None:
    _session(store)
    state = Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), DryEnvironment())).run(should_stop=lambda: True)
    assert (state.status.value, state.reason) == ("paused", "runner stopped; resume to continue")


class _CountingStore:
    """The store, counting how often the runner reads the command queue."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def pending(self, session_id: str) -> Any:
        self.reads += 1
        return self.store.pending(session_id)


class _QueueingBrowser(DryEnvironment):
    """Queues a pause while it performs the first action: during a step, as an operator would."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__()
        self.store = store
        self.command_id = ""

    def execute(self, action: str, **options: Any) -> ActionResult:
        if not self.command_id:
            self.command_id = queue_command(self.store, "s", {"kind": "pause"})
        return super().execute(action, **options)


def test_a_running_session_reads_the_queue_only_when_something_was_queued(store: SqlStore) -> None:
    _session(store)
    counting = _CountingStore(store)
    state = Runner(counting, "s", backend=Backend(ScriptedModel(SCRIPT), DryEnvironment())).run()  # type: ignore[arg-type]
    assert state.status.value == "succeeded"
    assert state.steps > 4
    # once at the start, and twice at the end (the last boundary, and the sweep that rejects late commands)
    assert counting.reads <= 3, f"the queue was read {counting.reads} times in {state.steps} steps with nothing queued"


def test_a_command_queued_during_a_step_is_applied_at_the_next_boundary(store: SqlStore) -> None:
    _session(store)
    browser = _QueueingBrowser(store)
    state = Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), browser)).run(
        on_idle=lambda state: False  # leave once paused
    )
    assert browser.command_id, "the test never queued its command"
    events = store.load("s")
    action = next(e.seq for e in events if e.kind is Kind.ACTION_EXECUTED)
    applied = next(e for e in events if e.kind is Kind.COMMAND_APPLIED)
    steps_between = [e for e in events if action < e.seq < applied.seq and e.kind is Kind.STEP]
    assert applied.payload.command_id == browser.command_id
    assert steps_between == [], "the runner took another step before applying a command queued during the last one"
    assert state.status.value == "paused"


class _Page(DryEnvironment):
    """A page with elements [1] and [2] only."""

    def check(self, action: str) -> str | None:
        return None if action in ("click [1]", "click [2]") else f"no element for {action!r}"


def test_the_runner_checks_an_edited_action_against_its_page(store: SqlStore) -> None:
    _session(store, paused=True)
    queue_command(store, "s", {"kind": "edit_action", "node": "0", "action": "click [9999]"})
    Runner(store, "s", backend=Backend(ScriptedModel(SCRIPT), _Page()), poll=0.01).run(on_idle=lambda state: False)
    assert list(_handled(store, "s").values()) == [
        ("command_rejected", "click [9999] cannot run on this page: no element for 'click [9999]'")
    ]
