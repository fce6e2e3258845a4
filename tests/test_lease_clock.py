"""A runner whose clock runs ahead takes no live lease: on PostgreSQL leases are judged by the database's clock.

An honest runner holds a session in a forked process, each browser action taking 0.4 s, so one is
nearly always in flight. A second forked process plays another machine whose clock runs 10 s ahead
(its `time.time` and host name patched after the fork) and keeps trying to take the session, by
`Runner.run`'s `claim` or by a `Worker`'s `claim_runnable`. Side effects are recorded outside the
store (test_lease.py's `Recorded`), so an action run twice shows even when the store refused its
events. The honest runner then dies right after a committed action (nothing of its in flight, as
`kill -9` between two steps leaves it), and the skewed one must take over once the lease runs out.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from postgres import fresh_database
from test_lease import BROWSER_ACTIONS, MODEL_CALLS, Recorded, duplicated, side_effects
from waiting import wait_until

from planner.browser.dry import DRY_START, DryEnvironment
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from sessions.backends import Backend
from sessions.client.creation import create_session
from sessions.store.sql import SqlStore
from sessions.worker.processes import Worker
from sessions.worker.runner import Runner, RunnerBusy

pytestmark = pytest.mark.slow

FORK = multiprocessing.get_context("fork")
SKEW_S = 10.0
"""How far ahead the skewed machine's clock runs: more than a lease, so by its clock every heartbeat is stale."""
LEASE_S = 4.0
ACTION_S = 0.4
HONEST_S = 4.0
"""How long the honest runner runs before it dies."""
SKEWED_HOST = "skewed-host"
PRODUCTS = 14
TASK = f"check {PRODUCTS} products"
SCRIPT: dict[str, Any] = {
    "nodes": {
        TASK: {"type": "AND", "children": [f"product {n}" for n in range(PRODUCTS)]},
        **{f"product {n}": {"type": "ACTION", "action": f"click [{n}]"} for n in range(PRODUCTS)},
    },
    "final_answer": "all checked",
}


def _backend(effects: Path, tag: str) -> Backend:
    """The scripted model and a dry browser whose every action takes `ACTION_S`, each call recorded."""

    def slow(op: str, key: str) -> None:
        if op == "execute":
            time.sleep(ACTION_S)

    model = Recorded(ScriptedModel(Script.model_validate(SCRIPT)), MODEL_CALLS, effects, tag)
    return Backend(model, Recorded(DryEnvironment(), BROWSER_ACTIONS, effects, tag, slow))


def _honest(url: str, session_id: str, effects: Path) -> None:
    """Run the session for `HONEST_S`, then die right after a committed action, holding the lease."""
    store = SqlStore(url)
    started = time.monotonic()

    def on_events(events: list[Event]) -> None:
        if time.monotonic() - started >= HONEST_S and any(e.kind is Kind.ACTION_EXECUTED for e in events):
            os._exit(9)

    Runner(store, session_id, backend=_backend(effects, "honest"), on_events=on_events, stale_after=LEASE_S).run()
    os._exit(0)


def _on_a_skewed_machine() -> None:
    """What another machine whose clock runs `SKEW_S` ahead looks like to this code (in the child only)."""
    real = time.time
    time.time = lambda: real() + SKEW_S
    socket.gethostname = lambda: SKEWED_HOST  # a holder on another host is alive until its lease is stale


class _Tries(SqlStore):
    """A store that notes each claim: when (monotonic, one clock for every process of the machine) and
    whether it took a lease."""

    def __init__(self, url: str, tries: Path) -> None:
        super().__init__(url)
        self.tries = tries

    def claim(self, *args: Any, **kwargs: Any) -> int | None:
        taken = super().claim(*args, **kwargs)
        self._note(taken is not None)
        return taken

    def claim_runnable(self, *args: Any, **kwargs: Any) -> list[tuple[str, int]]:
        taken = super().claim_runnable(*args, **kwargs)
        self._note(bool(taken))
        return taken

    def _note(self, took: bool) -> None:
        with self.tries.open("a") as file:
            file.write(f"{time.monotonic()}\t{took}\n")


def _tries(path: Path) -> list[tuple[float, bool]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [(float(at), took == "True") for at, took in (line.split("\t") for line in lines)]


def _skewed(url: str, session_id: str, effects: Path, tries: Path, how: str) -> None:
    """Try to take the session until it has run to its end: by `Runner.run` ("claim") or a `Worker`."""
    _on_a_skewed_machine()
    store = _Tries(url, tries)
    deadline = time.monotonic() + 60
    if how == "claim":
        while time.monotonic() < deadline:
            try:
                Runner(store, session_id, backend=_backend(effects, "skewed"), stale_after=LEASE_S).run()
                break
            except RunnerBusy:
                time.sleep(0.2)
    else:
        mock.patch("sessions.worker.runner.build_backend", lambda *args, **kwargs: _backend(effects, "skewed")).start()
        worker = Worker(store, stale_after=LEASE_S, poll=0.2)
        thread = threading.Thread(target=worker.run)
        thread.start()
        while store.session(session_id).status == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        worker.stop()
        thread.join(30)
    store.close()


def _acted(effects: Path, tag: str) -> bool:
    return any(who == tag and op == "execute" for who, op, _ in side_effects(effects))


@pytest.mark.parametrize("how", ["claim", "claim_runnable"])
def test_a_machine_whose_clock_runs_ahead_takes_no_live_lease(how: str, postgres_url: str, tmp_path: Path) -> None:
    url = fresh_database(postgres_url)
    store = SqlStore(url)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    session_id = create_session(store, TASK, f"script:{script}", start_url=DRY_START, session_id="skew")
    effects, tries = tmp_path / "effects.log", tmp_path / "tries.log"
    honest = FORK.Process(target=_honest, args=(url, session_id, effects))
    skewed = FORK.Process(target=_skewed, args=(url, session_id, effects, tries, how))
    honest.start()
    owners: list[str | None] = []

    def honest_dead() -> bool:
        owners.append(store.session(session_id).lease_owner)
        return not honest.is_alive()

    try:
        wait_until(lambda: _acted(effects, "honest"), "the honest runner's first browser action")
        skewed.start()
        wait_until(honest_dead, "the honest runner to die after its run", timeout=30)
        died = time.monotonic()
        wait_until(
            lambda: (store.session(session_id).lease_owner or "").startswith(f"{SKEWED_HOST}:"),
            "the skewed machine to take the dead runner's session",
            timeout=LEASE_S + 10,
        )
        took_over = time.monotonic() - died
        wait_until(lambda: store.session(session_id).status != "running", "the session to end", timeout=60)
        skewed.join(30)
    finally:
        for process in (honest, skewed):
            if process.is_alive():
                process.kill()
                process.join(5)
    twice = duplicated(effects)
    assert twice == {}, f"model calls or browser actions made twice (by whom): {twice}"
    honest_owner = f"{socket.gethostname()}:{honest.pid}:"
    taken = sorted({str(owner) for owner in owners if not (owner or "").startswith(honest_owner)})
    assert taken == [], f"the lease was taken while the honest runner was alive and beating, by {taken}"
    while_alive = [took for at, took in _tries(tries) if at < died]
    assert len(while_alive) >= 5 and not any(while_alive), f"the skewed machine's tries while it lived: {while_alive}"
    assert honest.exitcode == 9, f"the honest runner stopped (exit {honest.exitcode}) before it was meant to die"
    assert skewed.exitcode == 0, f"the skewed machine's process failed (exit {skewed.exitcode})"
    assert LEASE_S - 1 <= took_over <= LEASE_S + 3, (
        f"the dead runner's session was taken {took_over:.1f} s after it died, its lease being {LEASE_S:g} s"
    )  # it died right after a write, which was a heartbeat too
    clicks = sorted(key for _, op, key in side_effects(effects) if op == "execute")
    assert clicks == sorted(f"click [{n}]" for n in range(PRODUCTS)), f"the actions run: {clicks}"
    assert _acted(effects, "honest") and _acted(effects, "skewed"), "each machine ran part of the session"
    assert store.session(session_id).status == "succeeded"
    store.close()
