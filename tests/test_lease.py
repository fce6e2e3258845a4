"""Exactly one runner per session: the claim race, a lease kept through a slow call, a lease lost
mid-run, and many simultaneous resumes after a crash. On SQLite (file) and PostgreSQL.

Runners race in forked processes (as two `resume` commands would) or threads (as the console's
runner pool would). Side effects are recorded outside the store, one line per model call or browser
action, so a duplicated expansion or click shows even when the store refused its events.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import trials
from postgres import database_for

from planner.browser.dry import DRY_START, DryEnvironment
from planner.events import Kind
from planner.models.scripted import Script, ScriptedModel
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store import LeaseLost
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner, RunnerBusy, _holder_gone

pytestmark = pytest.mark.slow

FORK = multiprocessing.get_context("fork")
TASK = "check six products"
SCRIPT: dict[str, Any] = {
    "nodes": {
        TASK: {"type": "AND", "children": [f"product {n}" for n in range(6)]},
        **{f"product {n}": {"type": "AND", "children": [f"open {n}", f"note {n}"]} for n in range(6)},
        **{f"open {n}": {"type": "ACTION", "action": f"click [{n}]"} for n in range(6)},
        **{f"note {n}": {"type": "ACTION", "action": f"note [product {n} checked]"} for n in range(6)},
    },
    "final_answer": "all six checked",
}
MODEL_CALLS = frozenset({"expand", "repair", "observe", "check_completion", "final_answer", "extract_constraints"})
BROWSER_ACTIONS = frozenset({"execute"})


@pytest.fixture(params=["disk", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_for(request.param, request, tmp_path)


class Recorded:
    """A model or environment that appends one line per call to a shared file ("tag op key"), with
    O_APPEND so lines from several processes never interleave."""

    def __init__(self, inner: object, names: frozenset[str], path: Path, tag: str, gate: Any = None) -> None:
        self._inner = inner
        self._names = names
        self._path = path
        self._tag = tag
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name not in self._names:
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            key = args[0] if isinstance(args[0], str) else args[0].node.id
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(fd, f"{self._tag}\t{name}\t{key}\n".encode())
            finally:
                os.close(fd)
            if self._gate is not None:
                self._gate(name, key)
            return value(*args, **kwargs)

        return call


def recorded_backend(path: Path, tag: str, gate: Any = None) -> Backend:
    script = Script.model_validate(SCRIPT)
    model = Recorded(ScriptedModel(script), MODEL_CALLS, path, tag, gate)
    return Backend(model, Recorded(DryEnvironment(), BROWSER_ACTIONS, path, tag, gate))  # type: ignore[arg-type]


def side_effects(path: Path) -> list[tuple[str, str, str]]:
    if not path.exists():
        return []
    return [tuple(line.split("\t")) for line in path.read_text().splitlines()]  # type: ignore[misc]


def duplicated(path: Path) -> dict[tuple[str, str], list[str]]:
    """Model calls or browser actions made more than once (by whichever runners)."""
    by_call: dict[tuple[str, str], list[str]] = {}
    for tag, op, key in side_effects(path):
        by_call.setdefault((op, key), []).append(tag)
    return {call: tags for call, tags in by_call.items() if len(tags) > 1}


def new_session(store: SqlStore, session_id: str, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    if not script.exists():
        script.write_text(json.dumps(SCRIPT))
    create_session(store, TASK, f"script:{script}", start_url=DRY_START, session_id=session_id)


def dead_pid() -> int:
    """The pid of a process that existed and was killed (then reaped), like a runner after kill -9."""
    proc = subprocess.Popen(["sleep", "60"])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return proc.pid


# -- the claim itself: a compare-and-set ---------------------------------------------------------------


def _claimer(url: str, jobs: Any, results: Any, barrier: Any) -> None:
    store = SqlStore(url)
    owner = f"{socket.gethostname()}:{os.getpid()}:racer"
    while (session_id := jobs.get()) is not None:
        barrier.wait(60)
        generation = store.claim(session_id, owner, time.time(), 15.0, gone=_holder_gone, pid=os.getpid())
        results.put((session_id, owner, generation))
    store.close()


def test_of_many_racers_after_a_dead_holder_exactly_one_claims(url: str) -> None:
    racers, count = 4, trials(60, 24)
    store = SqlStore(url)
    dead = f"{socket.gethostname()}:{dead_pid()}:crashed"
    barrier = FORK.Barrier(racers)
    results = FORK.Queue()
    queues = [FORK.Queue() for _ in range(racers)]
    workers = [FORK.Process(target=_claimer, args=(url, q, results, barrier)) for q in queues]
    for worker in workers:
        worker.start()
    try:
        for trial in range(count):
            session_id = f"race-{trial}"
            store.create_session(session_id, "t", "script", [], status="running")
            assert store.claim(session_id, dead, time.time(), 15.0) == 1, "the crashed runner held the lease"
            for q in queues:
                q.put(session_id)
            outcomes = [results.get(timeout=120) for _ in range(racers)]
            winners = [(owner, gen) for sid, owner, gen in outcomes if gen is not None]
            assert len(winners) == 1, f"trial {trial}: {len(winners)} racers claimed the session: {outcomes}"
            info = store.session(session_id)
            assert (info.lease_owner, info.lease_gen) == (winners[0][0], 2) == (winners[0][0], winners[0][1])
    finally:
        for q in queues:
            q.put(None)
        for worker in workers:
            worker.join(60)
        store.close()
    assert all(w.exitcode == 0 for w in workers), [w.exitcode for w in workers]


# -- a slow call keeps the lease --------------------------------------------------------------------------


def test_a_model_call_three_times_longer_than_the_lease_keeps_it(url: str, tmp_path: Path) -> None:
    stale_after, call_s = 2.0, 6.0
    store = SqlStore(url)
    new_session(store, "slow", tmp_path)
    effects = tmp_path / "effects.log"
    entered, left = threading.Event(), threading.Event()

    def slow_root_expansion(op: str, key: str) -> None:
        if (op, key) == ("expand", "0"):
            entered.set()
            time.sleep(call_s)
            left.set()

    runner = Runner(store, "slow", backend=recorded_backend(effects, "A", slow_root_expansion), stale_after=stale_after)
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("state", runner.run()))
    thread.start()
    assert entered.wait(60), "the runner never reached its slow model call"
    attempts = []
    while not left.is_set():
        attempts.append(store.claim("slow", "intruder", time.time(), stale_after, gone=_holder_gone))
        left.wait(0.2)
    thread.join(120)
    assert not thread.is_alive(), "the runner did not finish within 120 s"
    assert len(attempts) >= 10 and set(attempts) == {None}, f"another runner got the lease during the call: {attempts}"
    assert outcome["state"].status.value == "succeeded"
    assert duplicated(effects) == {}
    store.close()


# -- a lost lease stops the runner before the browser ------------------------------------------------------


def test_a_runner_whose_lease_was_taken_stops_before_its_next_action(url: str, tmp_path: Path) -> None:
    """50 trials (20 in the suite): the lease is taken while the runner waits in a model call (half of them after its
    heartbeat noticed); it must write nothing more and run no further browser action."""
    store = SqlStore(url)
    for trial in range(trials(50, 20)):
        session_id = f"steal-{trial}"
        new_session(store, session_id, tmp_path)
        effects = tmp_path / f"steal-{trial}.log"
        entered, proceed = threading.Event(), threading.Event()
        blocked_on = f"{trial % 6 + 1}"  # observing after "open N": the next step is a browser action

        def gate(
            op: str, key: str, blocked_on: str = blocked_on, entered: Any = entered, proceed: Any = proceed
        ) -> None:
            if op == "observe" and key == f"0.{blocked_on}.1":
                entered.set()
                assert proceed.wait(60), "the test never let the model call return"

        runner = Runner(store, session_id, backend=recorded_backend(effects, "A", gate), stale_after=2.0)
        raised: list[BaseException] = []

        def run(runner: Runner = runner, raised: list[BaseException] = raised) -> None:
            try:
                runner.run()
            except BaseException as error:  # noqa: BLE001 - inspected below
                raised.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 60
        while not entered.wait(0.05) and thread.is_alive() and time.monotonic() < deadline:
            pass
        assert entered.is_set(), f"trial {trial}: the runner never reached the blocking call: {raised!r}"
        taken = store.claim(session_id, "thief", time.time(), 2.0, gone=lambda owner: True)
        assert taken is not None
        before = store.session(session_id)
        actions_before = [e for e in side_effects(effects) if e[1] == "execute"]
        if trial % 2:
            deadline = time.monotonic() + 60
            while not (runner._lease and runner._lease.lost) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert runner._lease is not None and runner._lease.lost, "the heartbeat never noticed the lease was taken"
        proceed.set()
        thread.join(60)
        assert not thread.is_alive(), f"trial {trial}: the runner did not stop within 60 s"
        assert len(raised) == 1 and isinstance(raised[0], LeaseLost), f"trial {trial}: {raised!r}"
        after = store.session(session_id)
        assert (after.last_seq, after.status, after.lease_owner, after.lease_gen) == (
            before.last_seq,
            "running",
            "thief",
            taken,
        ), f"trial {trial}: the runner wrote after losing its lease"
        actions_after = [e for e in side_effects(effects) if e[1] == "execute"]
        assert actions_after == actions_before, f"trial {trial}: a browser action ran after the lease was lost"
    store.close()


def test_two_runner_threads_in_one_process_do_not_share_a_lease(url: str, tmp_path: Path) -> None:
    """The console runs sessions in threads of one process: the pid alone must not be the owner."""
    store = SqlStore(url)
    new_session(store, "pool", tmp_path)
    effects = tmp_path / "pool.log"
    entered, proceed = threading.Event(), threading.Event()

    def gate(op: str, key: str) -> None:
        if (op, key) == ("expand", "0"):
            entered.set()
            assert proceed.wait(60), "the test never let the model call return"

    first = Runner(store, "pool", backend=recorded_backend(effects, "A", gate), stale_after=2.0)
    thread = threading.Thread(target=first.run)
    thread.start()
    try:
        assert entered.wait(60), "the first runner never started"
        second = Runner(store, "pool", backend=recorded_backend(effects, "B"), stale_after=2.0)
        with pytest.raises(RunnerBusy, match="is being run by process"):
            second.run()
    finally:
        proceed.set()
        thread.join(60)
    assert not thread.is_alive()
    assert store.session("pool").status == "succeeded"
    assert {tag for tag, _, _ in side_effects(effects)} == {"A"}
    store.close()


# -- simultaneous resumes after a crash -------------------------------------------------------------------


def _crashing_run(url: str, session_id: str, effects: Path, crash_after: int) -> None:
    """A runner killed after `crash_after` committed batches, holding its lease (as kill -9 leaves it)."""
    store = SqlStore(url)
    batches = 0

    def on_events(events: list[Any]) -> None:
        nonlocal batches
        batches += 1
        if batches >= crash_after:
            os._exit(9)

    Runner(store, session_id, backend=recorded_backend(effects, "crashed"), on_events=on_events).run()
    os._exit(0)


def _resumer(url: str, worker: int, jobs: Any, results: Any, barrier: Any) -> None:
    store = SqlStore(url)
    while (job := jobs.get()) is not None:
        session_id, effects = job
        runner = Runner(store, session_id, backend=recorded_backend(Path(effects), f"resumer{worker}"))
        barrier.wait(60)
        try:
            runner.run()
            outcome = "ran"
        except RunnerBusy:
            outcome = "busy"
        except Exception as error:  # noqa: BLE001 - reported to the test, which fails on it
            outcome = f"{type(error).__name__}: {error}"
        results.put((session_id, worker, outcome))
    store.close()


def test_simultaneous_resumes_after_a_crash_run_the_session_once(url: str, tmp_path: Path) -> None:
    count, resumers = trials(50, 20), 2
    rng = random.Random(9)
    store = SqlStore(url)
    barrier = FORK.Barrier(resumers)
    results = FORK.Queue()
    queues = [FORK.Queue() for _ in range(resumers)]
    workers = [FORK.Process(target=_resumer, args=(url, w, queues[w], results, barrier)) for w in range(resumers)]
    for worker in workers:
        worker.start()
    crashed_mid_run = 0
    try:
        for trial in range(count):
            session_id = f"resume-{trial}"
            new_session(store, session_id, tmp_path)
            effects = tmp_path / f"{session_id}.log"
            crash = FORK.Process(target=_crashing_run, args=(url, session_id, effects, rng.randint(1, 30)))
            crash.start()
            crash.join(120)
            assert crash.exitcode in (0, 9), f"trial {trial}: the first runner failed (exit {crash.exitcode})"
            crashed_mid_run += crash.exitcode == 9
            for q in queues:
                q.put((session_id, str(effects)))
            outcomes = sorted(results.get(timeout=120)[2] for _ in range(resumers))
            assert set(outcomes) <= {"ran", "busy"}, f"trial {trial}: {outcomes}"
            assert duplicated(effects) == {}, f"trial {trial}: calls made twice: {duplicated(effects)}"
            events = store.load(session_id)
            expansions = Counter(e.node_id for e in events if e.kind is Kind.STEP and e.payload.work == "expand")
            assert expansions and max(expansions.values()) == 1, f"trial {trial}: expansions in the log {expansions}"
            assert store.session(session_id).status == "succeeded", f"trial {trial}: {store.session(session_id)}"
    finally:
        for q in queues:
            q.put(None)
        for worker in workers:
            worker.join(60)
        store.close()
    assert crashed_mid_run >= count * 0.8, "the first runners finished before the crash; the test proved little"


def test_a_runner_is_alive_for_its_own_lease_length_not_the_readers() -> None:
    """The console judged every lease by the default 15 s: a worker started with a 40 s lease read as
    dead between heartbeats, and the console offered to restart it (two runners)."""
    from sessions.store import STALE_AFTER, SessionInfo

    def row(heartbeat_age: float, lease: float | None) -> SessionInfo:
        return SessionInfo(
            "s", "task", "demo", "running", None, 3, 3, 0.0, 0.0,
            runner_pid=7, heartbeat_at=100.0 - heartbeat_age, lease_owner="w:7", lease_seconds=lease,
        )  # fmt: skip

    assert row(20, 40).runner_alive(100.0, STALE_AFTER), "within its holder's 40 s"
    assert not row(20, None).runner_alive(100.0, STALE_AFTER), "a lease from before the store kept its length"
    assert not row(5, 4).runner_alive(100.0, STALE_AFTER), "past its holder's 4 s, whatever the reader's default"
