"""Workers on PostgreSQL: `python -m bench.fleet [--db URL] [--sessions N] [--workers 1,2,4] [--kills N]`.

With `--capacity`, what a fleet carries when sessions wait as real ones do (bench/capacity.py).

Scaling: for each worker count, N scripted sessions on the dry environment submitted at once; the
figure is total steps per second, and the scaling efficiency is (rate with w workers) / (w x rate
with 1). Failover: a worker is killed with SIGKILL while it runs a session, and the figure is how
long after its lease ran out (and after the kill) the other, idle worker took that session.

The database is `--db`, else $ANDOR_TEST_POSTGRES, else a throwaway server started with initdb/pg_ctl
(`sessions.store.pgserver`). Figures only, no assertions: the machine it runs on decides them
(docs/architecture.md, "bench/fleet.py").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from planner.browser.dry import DRY_START
from planner.config import EngineConfig
from sessions.client.creation import create_session
from sessions.store.pgserver import PostgresServer, fresh_database
from sessions.store.sql import SqlStore

ROOT = Path(__file__).resolve().parent.parent
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
LEASE_S = 5.0
LONG_TASK = "check a hundred products"
LONG_SCRIPT = {
    "nodes": {
        LONG_TASK: {"type": "AND", "children": [f"shelf {g}" for g in range(10)]},
        **{f"shelf {g}": {"type": "AND", "children": [f"product {g}{n}" for n in range(10)]} for g in range(10)},
        **{f"product {p:02d}": {"type": "AND", "children": [f"open {p:02d}", f"note {p:02d}"]} for p in range(100)},
        **{f"open {p:02d}": {"type": "ACTION", "action": f"click [{p}]"} for p in range(100)},
        **{f"note {p:02d}": {"type": "ACTION", "action": f"note [product {p} checked]"} for p in range(100)},
    },
    "final_answer": "all hundred checked",
}
"""The failover's sessions: long enough (624 steps) to be killed part-way through."""
LONG_CONFIG = EngineConfig(max_steps=1000)
"""Their step budget: above the 624 steps they take (the default, 300, would end them first)."""


@contextmanager
def server(db: str | None) -> Iterator[str]:
    """A PostgreSQL server URL: the one given, or a throwaway one for this run."""
    given = db or os.environ.get("ANDOR_TEST_POSTGRES")
    if given:
        yield given
        return
    pg = PostgresServer().start()
    try:
        yield pg.url
    finally:
        pg.stop()


def start_workers(url: str, count: int, *options: str, logs: Path) -> list[subprocess.Popen[bytes]]:
    """`count` worker processes, logging to files in `logs` (a pipe nobody reads would block them),
    returned once each has said it is ready."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers, files = [], []
    for n in range(count):
        log = logs / f"worker-{n}.log"
        files.append(log)
        with log.open("wb") as out:  # the child keeps its own copy
            command = [sys.executable, "-m", "sessions", "worker", "--db", url, *options]
            workers.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=out))
    deadline = time.monotonic() + 60
    while not all(" ready " in log.read_text(errors="replace") for log in files):
        if time.monotonic() > deadline:
            raise SystemExit(f"a worker did not start: {[log.read_text(errors='replace')[-300:] for log in files]}")
        time.sleep(0.1)
    return workers


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=120)
        except subprocess.TimeoutExpired:
            worker.kill()


def wait_all_ended(store: SqlStore, count: int, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while True:
        ended = sum(s.status in ("succeeded", "failed") for s in store.sessions())
        if ended == count:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"only {ended} of {count} sessions ended within {timeout:g} s")
        time.sleep(0.05)


def steps_per_second(url: str, workers: int, sessions: int, model: str, logs: Path) -> float:
    store = SqlStore(fresh_database(url))
    processes = start_workers(store.url, workers, logs=logs)
    try:
        started = time.monotonic()
        for n in range(sessions):
            create_session(store, TASK, model, start_url=DRY_START, session_id=f"bench-{n:03d}")
        wait_all_ended(store, sessions)
        elapsed = time.monotonic() - started
        steps = sum(s.steps for s in store.sessions())
    finally:
        stop_workers(processes)
        store.close()
    return steps / elapsed


def failover(url: str, model: str, logs: Path) -> tuple[float, float]:
    """(seconds from lease expiry to takeover, seconds from kill to takeover) for one killed worker."""
    store = SqlStore(fresh_database(url))
    processes = start_workers(store.url, 2, "--lease-seconds", f"{LEASE_S:g}", logs=logs)
    victim = processes[0]
    mine = f"{socket.gethostname()}:{victim.pid}:"
    try:
        for n in range(1000):
            session_id = create_session(
                store, LONG_TASK, model, start_url=DRY_START, config=LONG_CONFIG, session_id=f"fail-{n:03d}"
            )
            while not (info := store.session(session_id)).lease_owner and info.status == "running":
                time.sleep(0.005)
            if (info.lease_owner or "").startswith(mine):
                break
            wait_all_ended(store, n + 1)  # the other worker took it: let it finish, then submit the next
        else:
            raise SystemExit("the worker to be killed took none of 1000 sessions")
        while (info := store.session(session_id)).steps == 0 and info.status == "running":
            time.sleep(0.005)
        time.sleep(random.random())  # the other worker looks once a second, from when it was last woken
        victim.send_signal(signal.SIGKILL)
        killed = time.time()
        victim.wait(60)
        orphan = store.session(session_id)
        if orphan.status != "running":  # it ended between the look and the kill: try again
            return failover(url, model, logs)
        while (store.session(orphan.id).lease_owner or mine).startswith(mine):
            time.sleep(0.01)
        taken = time.time()
    finally:
        stop_workers(processes)
        store.close()
    return taken - (orphan.heartbeat_at or killed) - LEASE_S, taken - killed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a PostgreSQL server URL (its databases are created per run)")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--workers", default="1,2,4", help="worker counts to compare")
    parser.add_argument("--kills", type=int, default=3)
    capacity = parser.add_argument_group("capacity (--capacity; bench/capacity.py)")
    capacity.add_argument("--capacity", action="store_true", help="sessions that wait as real ones do, instead")
    capacity.add_argument("--counts", default="50,200,500", help="concurrent session counts")
    capacity.add_argument("--capacity-workers", default="1,2", help="worker counts for each session count")
    capacity.add_argument("--median", type=float, default=3.0, help="a model call's median seconds")
    capacity.add_argument("--spread", type=float, default=0.7, help="the log-normal spread of a call's seconds")
    capacity.add_argument("--action-median", type=float, default=1.0, help="a dry action's median seconds")
    capacity.add_argument("--chromium", type=int, default=20, help="sessions in Chromium on the demo shop (0: none)")
    args = parser.parse_args(argv)
    if args.capacity:
        from bench import capacity as bench_capacity
        from planner.latency import Latency

        latency = Latency(model_median_s=args.median, model_spread=args.spread, action_median_s=args.action_median)
        with tempfile.TemporaryDirectory() as scratch, server(args.db) as url:
            counts = [int(n) for n in args.counts.split(",") if n]
            workers = [int(n) for n in args.capacity_workers.split(",")]
            bench_capacity.main(url, counts, workers, latency, args.chromium, Path(scratch))
        return
    with tempfile.TemporaryDirectory() as scratch, server(args.db) as url:
        script = Path(scratch) / "script.json"
        script.write_text(json.dumps(SCRIPT))
        model = f"script:{script}"
        long_script = Path(scratch) / "long.json"
        long_script.write_text(json.dumps(LONG_SCRIPT))
        rates = {}
        for count in (int(n) for n in args.workers.split(",")):
            rates[count] = steps_per_second(url, count, args.sessions, model, Path(scratch))
        base = rates.get(1)
        print(f"{args.sessions} dry sessions (40 steps each), one session at a time per worker, {os.cpu_count()} cores")
        print(f"{'workers':>8} {'steps/s':>9} {'speed-up':>9} {'efficiency':>11}")
        for count, rate in rates.items():
            speedup = rate / base if base else float("nan")
            print(f"{count:>8} {rate:>9.0f} {speedup:>9.2f} {speedup / count:>11.2f}")
        waits = [failover(url, f"script:{long_script}", Path(scratch)) for _ in range(args.kills)]
        after_lease = [w[0] for w in waits]
        after_kill = [w[1] for w in waits]
        print(f"failover, lease {LEASE_S:g} s, {args.kills} kills:")
        print(
            f"  claimed after the lease ran out: median {statistics.median(after_lease):.2f} s, "
            f"max {max(after_lease):.2f} s"
        )
        print(f"  claimed after kill -9: median {statistics.median(after_kill):.2f} s, max {max(after_kill):.2f} s")


if __name__ == "__main__":
    main()
