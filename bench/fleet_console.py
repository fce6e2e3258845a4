"""The console as a client of workers: `python -m bench.fleet_console [--db URL] [--sessions 100] [--rounds 30]`.

Measures how long an event takes to show in the console when a hundred sessions are live on
workers (goal p95 <= 1.5 s). A PostgreSQL server (`--db`, else $ANDOR_TEST_POSTGRES, else a throwaway
one, as `bench.fleet` does); `--sessions` dry scripted sessions (624 steps each), created paused;
`--workers` worker processes (`python -m sessions worker`, `--concurrency` sessions each); the
console started by `ui.server.start_console` with `ANDOR_RUNNER=workers` on that database; headless
Chromium on one session's page.

The hundred stay live the way an operator's fleet does: a background operator sends a `step` to
each paused session in turn, `--rate` steps a second in all, and a worker takes each one, runs its
step and leaves it paused again. The watched session gets the same steps, one at a time, and the
figure is `bench.console`'s: from the commit of the step's last event ("paused after one step", its
timestamp in the log) to the page's status line showing that event's number. Also printed: the
console process's CPU per second meanwhile, and how many steps the fleet took.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from bench.console import _cpu_seconds, _p95
from bench.fleet import LONG_CONFIG, LONG_SCRIPT, LONG_TASK, server, start_workers, stop_workers
from planner.browser.dry import DRY_START
from planner.events import SessionStatus
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.pgserver import fresh_database
from sessions.store.sql import SqlStore
from ui.server import start_console

GOAL_P95_S = 1.5
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_STEPPED = "paused after one step"
"""The reason of the event a `step` ends with: the event whose arrival on screen is timed."""


class Operator(threading.Thread):
    """Steps each paused session of the fleet in turn, `rate` steps a second in all, until stopped: a
    session gets its next step once its last one has run (its log has moved on) and its worker left."""

    def __init__(self, store: SqlStore, session_ids: list[str], rate: float) -> None:
        super().__init__(name="background-operator", daemon=True)
        self.store = store
        self.session_ids = frozenset(session_ids)
        self.rate = rate
        self.sent = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        sent_at: dict[str, int] = {}
        while not self.stopping.is_set():
            for info in self.store.sessions():
                if self.stopping.is_set():
                    return
                ready = info.status == "paused" and info.lease_owner is None
                if info.id in self.session_ids and ready and info.last_seq > sent_at.get(info.id, -1):
                    queue_command(self.store, info.id, {"kind": "step", "by": "bench operator"})
                    sent_at[info.id] = info.last_seq
                    self.sent += 1
                    self.stopping.wait(1.0 / self.rate)
            self.stopping.wait(0.05)


@contextmanager
def console_page(url: str, session_id: str) -> Iterator[tuple[Page, int]]:
    """The console in workers mode on `url` (`ui.server.start_console`), open on one session's page in
    headless Chromium; with the console's process id."""
    console = start_console(url, env={"ANDOR_RUNNER": "workers"})
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(f"{console.url}/?session={session_id}")
            page.wait_for_selector("svg text", timeout=90_000)
            yield page, console.process.pid
            browser.close()
    finally:
        console.stop()


def latency_rounds(page: Page, store: SqlStore, session_id: str, rounds: int) -> list[float]:
    """Seconds from each step's last event's commit to the page showing its event number."""
    latencies = []
    for round_ in range(rounds + 1):
        last = store.session(session_id).last_seq
        queue_command(store, session_id, {"kind": "step", "by": "bench"})
        target = None
        deadline = time.time() + 30
        while target is None:
            assert time.time() < deadline, "no worker took the watched session's step within 30 s"
            for event in store.load(session_id, after=last):
                if isinstance(event.payload, SessionStatus) and event.payload.reason == _STEPPED:
                    target = event
            time.sleep(0.005)
        page.wait_for_function(
            "n => document.body.innerText.includes('· event ' + n)", arg=str(target.seq), timeout=30_000, polling=25
        )
        if round_:  # the first round warms the page up
            latencies.append(time.time() - target.at)
        while store.session(session_id).lease_owner is not None:  # the worker leaves it before the next step
            time.sleep(0.005)
    return latencies


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet_console", description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a PostgreSQL server URL (a database is created for the run)")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rate", type=float, default=20.0, help="background steps per second over the fleet")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch, server(args.db) as pg:
        script = Path(scratch) / "long.json"
        script.write_text(json.dumps(LONG_SCRIPT))
        url = fresh_database(pg)
        store = SqlStore(url)
        ids = [
            create_session(
                store,
                LONG_TASK,
                f"script:{script}",
                start_url=DRY_START,
                config=LONG_CONFIG,
                session_id=f"fleet-{n:03d}",
                paused=True,
            )
            for n in range(args.sessions)
        ]
        watched, background = ids[0], ids[1:]
        workers = start_workers(url, args.workers, "--concurrency", str(args.concurrency), logs=Path(scratch))
        operator = Operator(store, background, args.rate)
        try:
            with console_page(url, watched) as (page, console):
                operator.start()
                time.sleep(3)  # the fleet under way
                steps_before, cpu_before, started = _fleet_steps(store), _cpu_seconds(console), time.time()
                latencies = latency_rounds(page, store, watched, args.rounds)
                elapsed = time.time() - started
                cpu = (_cpu_seconds(console) - cpu_before) / elapsed
                fleet_rate = (_fleet_steps(store) - steps_before) / elapsed
                live = sum(info.status in ("running", "paused") for info in store.sessions())
        finally:
            operator.stopping.set()
            operator.join(10)
            stop_workers(workers)
            store.close()
    print(
        f"{args.sessions} dry sessions on {args.workers} workers ({args.concurrency} at a time each), "
        f"{live} still live at the end, the fleet stepping {fleet_rate:.1f} steps/s meanwhile; {os.cpu_count()} cores"
    )
    print(
        f"event -> visible in the workers-mode console ({len(latencies)} events): "
        f"p50 {statistics.median(latencies):.2f} s, p95 {_p95(latencies):.2f} s, max {max(latencies):.2f} s "
        f"(goal p95 <= {GOAL_P95_S} s)"
    )
    print(f"console process CPU meanwhile: {cpu:.2f} s per s")


def _fleet_steps(store: SqlStore) -> int:
    return sum(info.steps for info in store.sessions())


if __name__ == "__main__":
    main()
