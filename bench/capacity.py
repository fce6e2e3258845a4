"""What a fleet carries when sessions wait as real ones do: `python -m bench.fleet --capacity`.

Every session's scripted model sleeps per call as a hosted model takes (`planner.latency`: a
log-normal draw, median 3 s, 99th percentile about 15 s, its own seed per session) and, on the dry
environment, each action sleeps as a browser action takes (median 1 s); on the demo shop in
Chromium the browser's own time is the action's. For each count of sessions and of worker processes
(`python -m sessions worker --concurrency ceil(sessions / workers)`), all sessions are created at
once on a fresh PostgreSQL database while the console (`ANDOR_RUNNER=workers`) is open on the first
one in headless Chromium, and the figures are:

- steps/s: every session's steps over the mean session's time from its creation to its end;
- efficiency: the sum over sessions of the least time each could take (its model calls' and dry
  actions' delays, recomputed from its log; for Chromium sessions, its actions at the time one
  session alone takes) over the sum of the times they took. 1.0 means the fleet added no waiting;
- PostgreSQL connections: the most held at once by the workers (by `application_name`), and by all;
- memory per session: the growth of the workers' process trees (their proportional set size, so a
  Chromium's shared pages count once) with every session running, over the sessions held;
- start: from a session's creation to its first model call starting (the claim, the runner's set-up);
- event -> visible: from the watched session's event commit to the console page showing its number;
- CPU: every process's CPU seconds per second of the run, by what it is (the workers' Python, their
  Playwright drivers, each kind of Chromium process, the console, the watching Chromium, PostgreSQL).

Figures only, no assertions (docs/benchmarks.md, "Fleet capacity").
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from bench.console import _p95
from bench.fleet import SCRIPT, TASK, start_workers, stop_workers, wait_all_ended
from bench.fleet_console import console_page
from planner.actions import is_note
from planner.browser.dry import DRY_START
from planner.events import ActionExecuted, Event, ModelCalled
from planner.latency import Latency
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.pgserver import fresh_database
from sessions.store.sql import SqlStore
from ui.server import free_port

SHOP_PAGES = [
    "/",
    "/category/printers",
    "/category/headphones",
    "/category/coffee-makers",
    "/category/backpacks",
    "/category/keyboards",
]
"""The six pages a shop session opens, one per product of the dry script."""


def shop_script(shop: str) -> dict[str, Any]:
    """The dry script's shape (six products, each opened then noted) on the demo shop's pages."""
    pages = {f"open {n}": f"goto [{shop}{path}]" for n, path in enumerate(SHOP_PAGES)}
    nodes = {**SCRIPT["nodes"], **{name: {"type": "ACTION", "action": action} for name, action in pages.items()}}
    return {**SCRIPT, "nodes": nodes}


@dataclass
class Row:
    """One run's figures."""

    sessions: int
    workers: int
    where: str
    steps: int = 0
    steps_per_s: float = 0.0
    ideal_per_s: float = 0.0
    efficiency: float = 0.0
    worker_connections: int = 0
    all_connections: int = 0
    mib_per_session: float = 0.0
    start_p50: float = 0.0
    start_p95: float = 0.0
    visible: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    action_s: float = 0.0
    """The mean browser (or dry) action's time, as the sessions' logs recorded it."""
    cpu: str = ""
    """CPU seconds per second of the run by kind of process (`Profile.shares`)."""
    peak_cpu: float = 0.0
    """The machine's busiest 5 s of the run, in CPU seconds per second (`Profile.peak`)."""


class Sampler(threading.Thread):
    """Every half second: the connections PostgreSQL has open per process, the sessions held, the
    workers' process trees' memory (kept from the sample with the most sessions held), and every
    process's CPU time by what it is (`Profile`)."""

    def __init__(self, store: SqlStore, url: str, workers: list[int], console: int) -> None:
        super().__init__(name="capacity-sampler", daemon=True)
        import psycopg

        self.store = store
        self.database = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True)
        self.workers = workers
        self.baseline = tree_pss_mib(workers)
        self.held = 0
        self.grown_mib = 0.0
        self.worker_connections = 0
        self.all_connections = 0
        self.stopping = threading.Event()
        self.profile = Profile(workers, console)

    def run(self) -> None:
        names = {f"andor:{pid}" for pid in self.workers}
        while not self.stopping.wait(0.5):
            stats = process_stats()
            self.profile.sample(stats)
            rows = self.database.execute(
                "SELECT application_name, count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1"
            ).fetchall()
            self.worker_connections = max(self.worker_connections, sum(n for name, n in rows if name in names))
            self.all_connections = max(self.all_connections, sum(n for _, n in rows))
            held = sum(1 for info in self.store.sessions() if info.lease_owner is not None)
            if held >= self.held and held:
                self.held = held
                self.grown_mib = tree_pss_mib(self.workers, stats) - self.baseline

    def stop(self) -> None:
        self.stopping.set()
        self.join(10)
        self.database.close()


class Profile:
    """CPU seconds by kind of process over a run, from `/proc`: the workers' own Python, their
    Playwright drivers, Chromium's browser, renderer and GPU/utility processes, the console, the
    bench's watching Chromium, PostgreSQL, and the rest of the machine. A process is counted up to its
    last sample, so one that exits between samples loses at most half a second."""

    def __init__(self, workers: list[int], console: int) -> None:
        self.owners = {**{pid: "worker" for pid in workers}, console: "console", os.getpid(): "watcher"}
        self.seen: dict[tuple[int, str], tuple[str, float]] = {}
        """(pid, start time) -> (kind, CPU seconds so far)."""
        self.started = time.monotonic()
        self.elapsed = 0.0
        self._first: dict[tuple[int, str], float] = {}
        self.history: list[tuple[float, float]] = []
        """(seconds into the run, CPU seconds of every process seen so far) per sample."""

    def sample(self, stats: dict[int, list[str]]) -> None:
        """Take one sample from `process_stats()`."""
        parents = {pid: int(fields[1]) for pid, fields in stats.items()}
        tick = os.sysconf("SC_CLK_TCK")
        for pid, fields in stats.items():
            start, cpu = fields[19], (int(fields[11]) + int(fields[12])) / tick
            key = (pid, start)
            if key not in self._first:
                self._first[key] = cpu  # CPU used before the run (a worker's start-up) is not the run's
                self.seen[key] = (self._kind(pid, parents), 0.0)
            self.seen[key] = (self.seen[key][0], cpu - self._first[key])
        self.elapsed = time.monotonic() - self.started
        self.history.append((self.elapsed, sum(cpu for _, cpu in self.seen.values())))

    def peak(self, window: float = 5.0) -> float:
        """The most CPU seconds per second over any `window` seconds of the run (all processes)."""
        best = 0.0
        for end, (at, total) in enumerate(self.history):
            start = next((i for i in range(end, -1, -1) if at - self.history[i][0] >= window), None)
            if start is not None:
                best = max(best, (total - self.history[start][1]) / (at - self.history[start][0]))
        return best

    def _kind(self, pid: int, parents: dict[int, int]) -> str:
        try:  # Chromium rewrites its children's titles into one string: split on spaces too
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
        except OSError:
            return "other"
        if not command:
            return "other"
        if command[0].startswith(b"postgres") or command[0].endswith(b"/postgres"):
            return "postgres"
        owner, ancestor = "other", pid
        while ancestor > 1:
            if ancestor in self.owners:
                owner = self.owners[ancestor]
                break
            ancestor = parents.get(ancestor, 1)
        if owner != "worker":
            return owner
        kind = next((part[7:].decode() for part in command if part.startswith(b"--type=")), None)
        if command[0].endswith(b"/chromium"):
            return f"chromium {kind or 'browser'}"
        return "playwright driver" if command[0].endswith(b"/node") else "worker python"

    def shares(self) -> str:
        """CPU seconds per second of the run by kind, largest first."""
        totals: dict[str, float] = {}
        for kind, cpu in self.seen.values():
            totals[kind] = totals.get(kind, 0.0) + cpu
        per_second = sorted(((cpu / max(self.elapsed, 1e-9), kind) for kind, cpu in totals.items()), reverse=True)
        return ", ".join(f"{kind} {share:.2f}" for share, kind in per_second if share >= 0.005)


def process_stats() -> dict[int, list[str]]:
    """Every process's `/proc/PID/stat` fields after its name (the parent is field 1, user and system
    CPU 11 and 12, the start time 19)."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stats[int(entry.name)] = (entry / "stat").read_text().rpartition(")")[2].split()
    return stats


def tree_pss_mib(roots: list[int], stats: dict[int, list[str]] | None = None) -> float:
    """The proportional set size of processes and all their descendants (Linux `/proc`), in MiB."""
    children: dict[int, list[int]] = {}
    for pid, fields in (stats if stats is not None else process_stats()).items():
        children.setdefault(int(fields[1]), []).append(pid)
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += int(re.search(r"^Pss:\s+(\d+)", rollup, re.MULTILINE)[1])  # type: ignore[index]
    return total / 1024


def watch(page: Page, store: SqlStore, session_id: str) -> list[float]:
    """Until the session ends: for each newest event, seconds from its commit to the page showing it."""
    shown = "n => { const m = document.body.innerText.match(/· event (\\d+)/); return m !== null && +m[1] >= n }"
    latencies, seen = [], 0
    while (info := store.session(session_id)).status not in ("succeeded", "failed"):
        if info.last_seq > seen:
            seen = info.last_seq
            committed = store.load(session_id, after=seen - 1, upto=seen)[0].at
            page.wait_for_function(shown, arg=seen, timeout=60_000, polling=25)
            latencies.append(time.time() - committed)
        time.sleep(0.02)
    return latencies[1:]  # the first waits for the page's first redraw of a running session


def read_log(
    events: list[Event], latency: Latency, action_s: float | None, born: float
) -> tuple[float, float, list[float]]:
    """From one session's log: the least time it could take (its model calls' delays and its actions':
    the dry environment's, or `action_s` each in Chromium), the wait from `born` (when it became
    runnable) to its first model call starting, and its actions' recorded times (seconds)."""
    least, first, actions = 0.0, None, []
    for event in events:
        payload = event.payload
        if isinstance(payload, ModelCalled):
            least += latency.model_delay(payload.question.value, event.node_id or "")
            if first is None:
                first = event.at - payload.latency_ms / 1000 - born
        elif isinstance(payload, ActionExecuted) and not is_note(payload.action):
            least += latency.action_delay(payload.action) if action_s is None else action_s
            actions.append(payload.duration_ms / 1000)
    return least, first or 0.0, actions


def run(
    pg: str,
    sessions: int,
    workers: int,
    latency: Latency,
    scratch: Path,
    *,
    shop: str | None = None,
    action_s: float | None = None,
    worker_options: tuple[str, ...] = (),
) -> Row:
    """One configuration on a fresh database; `shop` runs the sessions in Chromium on it."""
    url = fresh_database(pg)
    store = SqlStore(url)
    script = shop_script(shop) if shop else SCRIPT
    seeded = [latency.model_copy(update={"seed": latency.seed + n}) for n in range(sessions)]
    models = []
    for n, session_latency in enumerate(seeded):
        path = scratch / f"script-{n}.json"
        path.write_text(json.dumps({**script, "latency": session_latency.model_dump()}))
        models.append(f"script:{path}")
    concurrency = str(math.ceil(sessions / workers))
    options = ("--concurrency", concurrency, "--artifacts", str(scratch / "artifacts"), *worker_options)
    processes = start_workers(url, workers, *options, logs=scratch)
    row = Row(sessions, workers, ("shared" if "--shared-browser" in worker_options else "chromium") if shop else "dry")
    try:
        first = create_session(store, TASK, models[0], start_url=shop or DRY_START, session_id="cap-000", paused=True)
        with console_page(url, first) as (page, console):
            sampler = Sampler(store, url, [p.pid for p in processes], console)
            sampler.start()
            started = time.time()
            for n in range(1, sessions):
                create_session(store, TASK, models[n], start_url=shop or DRY_START, session_id=f"cap-{n:03d}")
            queue_command(store, first, {"kind": "resume", "by": "bench"})
            resumed = time.time()  # the watched session became runnable now, not when it was created
            row.visible = watch(page, store, first)
            wait_all_ended(store, sessions, timeout=3600)
            row.wall_s = time.time() - started
            sampler.stop()
        infos = store.sessions()
        born = {info.id: resumed if info.id == first else info.created_at for info in infos}
        taken = [(info.status_since or info.updated_at) - born[info.id] for info in infos]
        logs = [read_log(store.load(i.id), seeded[int(i.id[4:])], action_s, born[i.id]) for i in infos]
        least = [figures[0] for figures in logs]
        starts = [figures[1] for figures in logs]
        durations = [seconds for figures in logs for seconds in figures[2]]
        row.action_s = statistics.mean(durations) if durations else 0.0
        row.steps = sum(info.steps for info in infos)
        row.steps_per_s = row.steps / statistics.mean(taken)
        row.ideal_per_s = row.steps / statistics.mean(least)
        row.efficiency = sum(least) / sum(taken)
        row.start_p50, row.start_p95 = statistics.median(starts), _p95(starts)
        row.worker_connections, row.all_connections = sampler.worker_connections, sampler.all_connections
        row.mib_per_session = sampler.grown_mib / max(1, sampler.held)
        row.cpu = sampler.profile.shares()
        row.peak_cpu = sampler.profile.peak()
        failed = [info.id for info in infos if info.status != "succeeded"]
        if failed:
            print(f"  ({len(failed)} sessions did not succeed, e.g. {store.session(failed[0]).reason})")
    finally:
        stop_workers(processes)
        store.close()
    return row


@contextmanager
def shop_process() -> Iterator[str]:
    """The demo shop in a process of its own, as a site is to its agents (in this one it would share
    the bench's interpreter lock with the watcher); yields its URL once it answers."""
    port = free_port()
    shop = subprocess.Popen(
        [sys.executable, "-m", "demo.shop", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or shop.poll() is not None:
                    raise SystemExit(f"the demo shop did not answer on {url}") from None
                time.sleep(0.1)
        yield url
    finally:
        shop.terminate()
        shop.wait(30)


def print_rows(rows: list[Row]) -> None:
    print(
        f"{'where':>8} {'sessions':>8} {'workers':>7} {'steps/s':>8} {'ideal':>7} {'effic.':>6} "
        f"{'PG conn (workers/all)':>21} {'MiB/session':>11} {'start p50/p95 s':>15} {'visible p95 s':>13}"
    )
    for row in rows:
        visible = f"{_p95(row.visible):.2f} ({len(row.visible)})" if row.visible else "-"
        print(
            f"{row.where:>8} {row.sessions:>8} {row.workers:>7} {row.steps_per_s:>8.1f} {row.ideal_per_s:>7.1f} "
            f"{row.efficiency:>6.2f} {f'{row.worker_connections}/{row.all_connections}':>21} "
            f"{row.mib_per_session:>11.1f} {f'{row.start_p50:.2f}/{row.start_p95:.2f}':>15} {visible:>13}",
            flush=True,
        )
    for row in rows:
        print(
            f"  {row.where} {row.sessions} on {row.workers}: "
            + (f"mean action {row.action_s:.2f} s; " if row.action_s else "")  # the dry environment times none
            + f"CPU s per s (peak over "
            f"5 s {row.peak_cpu:.2f}): {row.cpu}",
            flush=True,
        )


def main(pg: str, counts: list[int], worker_counts: list[int], latency: Latency, chromium: int, scratch: Path) -> None:
    """The dry table for every count and worker count, then `chromium` sessions on the demo shop on one
    worker, with a Chromium each and then sharing one (`--shared-browser`), their actions' least time
    measured with one session alone first; each run in a directory of its own under `scratch`."""
    print(
        f"latency: model median {latency.model_median_s:g} s (spread {latency.model_spread:g}, at most "
        f"{latency.max_s:g} s), dry action median {latency.action_median_s:g} s; {os.cpu_count()} cores",
        flush=True,
    )
    rows = []
    for count in counts:
        for workers in worker_counts:
            directory = scratch / f"dry-{count}-{workers}"
            directory.mkdir()
            rows.append(run(pg, count, workers, latency, directory))
            print_rows(rows[-1:])
    if chromium:
        with shop_process() as shop:
            alone = scratch / "chromium-alone"
            alone.mkdir()
            calibration = run(pg, 1, 1, latency, alone, shop=shop)
            action_s = calibration.action_s
            print(f"one Chromium session alone: {action_s:.2f} s per browser action", flush=True)
            rows.append(calibration)
            for options in ((), ("--shared-browser",)):
                directory = scratch / f"chromium-{chromium}{''.join(options)}"
                directory.mkdir()
                rows.append(
                    run(pg, chromium, 1, latency, directory, shop=shop, action_s=action_s, worker_options=options)
                )
                print_rows(rows[-1:])
    print()
    print_rows(rows)
