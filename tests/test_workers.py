"""Workers on a shared database: many sessions over several worker processes with one killed, a session
released while it waits for approval and finished by other workers (one on a remote browser), and
`submit`. On the real PostgreSQL server the test set-up starts, and SQLite (where workers poll).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from cli_helpers import ROOT, cli, finish, last_json, spawn
from console_helpers import console_app
from postgres import fresh_database
from waiting import wait_until

from planner.actions import is_note
from planner.browser.dry import DRY_START
from planner.browser.server import BrowserServer
from planner.events import Kind
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store import SessionInfo
from sessions.store.reading import load_state
from sessions.store.sql import POOL_OVERFLOW, POOL_SIZE, SqlStore, database_url
from sessions.worker.processes import Worker
from sessions.worker.runner import Runner

pytestmark = pytest.mark.slow

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
LEASE_S = 4.0
"""The workers' lease in these tests: short, so a killed worker's sessions move on soon."""


def script_model(tmp_path: Path) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    return f"script:{script}"


def ended_exactly_once(store: SqlStore, session_id: str) -> list[str]:
    """What is wrong with a session's log: not one end, or an action executed twice."""
    events = store.load(session_id)
    problems = []
    ends = sum(e.kind is Kind.SESSION_FINISHED for e in events)
    if ends != 1:
        problems.append(f"{session_id} ended {ends} times")
    actions = Counter(e.node_id for e in events if e.kind is Kind.ACTION_EXECUTED)
    problems += [f"{session_id}: action {node} executed {n} times" for node, n in actions.items() if n > 1]
    return problems


def held_by(info: SessionInfo, pid: int) -> bool:
    return (info.lease_owner or "").startswith(f"{socket.gethostname()}:{pid}:")


# -- 30 sessions, 3 worker processes, one killed -----------------------------------------------------------

SHOP_TASKS = ("cheapest-espresso", "top-rated-webcam", "cheapest-espresso")
"""The sessions of the 30 that run on the demo shop in Chromium: short ones, no approval to wait for."""


def acted(store: SqlStore, session_id: str) -> bool:
    """Whether the session's browser has done something the log kept."""
    return any(e.kind is Kind.ACTION_EXECUTED for e in store.load(session_id))


@pytest.mark.browser
def test_thirty_sessions_over_three_workers_survive_a_worker_killed_mid_run(postgres_url: str, tmp_path: Path) -> None:
    """Three sessions on the demo shop, 27 dry. The first worker starts alone, so it takes the two
    oldest, on the shop, and is killed once one of them has acted in its browser: a browser session
    is taken over by another worker, which goes back to its page, and finishes it."""
    from demo.shop import start_shop
    from demo.tasks import check_answer, load_tasks

    tasks = {task.id: task for task in load_tasks()}
    url = fresh_database(postgres_url)
    store = SqlStore(url)
    model = script_model(tmp_path)
    options = ("--concurrency", "2", "--lease-seconds", f"{LEASE_S:g}", "--artifacts", str(tmp_path / "artifacts"))
    with start_shop() as shop:
        shop_ids = [
            create_session(
                store, tasks[t].task, "demo", start_url=shop.url + tasks[t].start_path, session_id=f"shop-{n}"
            )
            for n, t in enumerate(SHOP_TASKS)
        ]
        dry_ids = [
            create_session(store, TASK, model, start_url=DRY_START, session_id=f"fleet-{n:02d}") for n in range(27)
        ]
        ids = shop_ids + dry_ids
        victim = spawn("worker", "--db", url, *options)
        workers = [victim]
        try:
            wait_until(
                lambda: sum(held_by(s, victim.pid) for s in store.sessions() if s.id in shop_ids) == 2,
                "the first worker to take the two oldest sessions, on the shop",
                timeout=120,
            )
            workers += [spawn("worker", "--db", url, *options) for _ in range(2)]
            # Kill the victim while a session of its has acted in the browser: mid-run by construction.
            caught = wait_until(
                lambda: [
                    s.id
                    for s in store.sessions()
                    if s.id in shop_ids and held_by(s, victim.pid) and s.status == "running" and acted(store, s.id)
                ],
                "the first worker's browser to act for a session on the shop",
                timeout=120,
            )
            victim.send_signal(signal.SIGKILL)
            victim.wait(60)
            orphans = {s.id: s for s in store.sessions() if held_by(s, victim.pid) and s.status == "running"}
            assert set(caught) <= set(orphans), (caught, sorted(orphans))

            def taken_over() -> dict[str, float]:
                now = time.time()
                for info in store.sessions():
                    if info.id in orphans and info.id not in moved and not held_by(info, victim.pid):
                        moved[info.id] = now
                return moved if len(moved) == len(orphans) else {}

            moved: dict[str, float] = {}
            wait_until(taken_over, "the killed worker's sessions to be taken over", timeout=120)
            for session_id, at in moved.items():
                ran_out = orphans[session_id].heartbeat_at + LEASE_S  # type: ignore[operator]
                assert at - ran_out <= 10.0, f"{session_id} was taken over {at - ran_out:.1f} s after its lease ran out"

            wait_until(
                lambda: all(s.status in ("succeeded", "failed") for s in store.sessions()),
                "all 30 sessions to end on the two surviving workers",
                timeout=120,
            )
            assert [s.status for s in store.sessions()] == ["succeeded"] * 30
            problems = [problem for session_id in ids for problem in ended_exactly_once(store, session_id)]
            assert problems == [], problems
            for session_id, task in zip(shop_ids, SHOP_TASKS):
                answer = load_state(store, session_id).final_answer
                assert check_answer(tasks[task], answer).passed, (session_id, answer)
        finally:
            for worker in workers[1:]:
                worker.send_signal(signal.SIGTERM)
            outputs = [finish(worker, "a worker to stop on SIGTERM") for worker in workers[1:]]
            store.close()
    assert [w.returncode for w in workers[1:]] == [0, 0], [err[-500:] for _, err in outputs]
    runs = [json.loads(out.strip().splitlines()[-1])["runs"] for out, _ in outputs]
    assert sum(runs) >= len(orphans), f"the surviving workers ran {runs} sessions"


# -- a session released for approval, finished by other workers, one on a remote browser -----------------------


@pytest.fixture
def browser_server() -> Iterator[str]:
    """A Playwright browser server (`launchServer`) on Debian's Chromium; yields its ws:// address."""
    server = BrowserServer()
    try:
        yield server.endpoint()
    finally:
        server.stop()


def requests(store: SqlStore, session_id: str) -> int:
    """How many approvals the session has asked for so far."""
    return sum(1 for event in store.load(session_id) if event.kind is Kind.APPROVAL_REQUESTED)


def run_worker_until(worker: Worker, done: Any, what: str) -> None:
    """Run `worker` on a thread of its own until `done()` holds, then stop it and wait for it."""
    thread = threading.Thread(target=worker.run, name="test-worker")
    thread.start()
    try:
        wait_until(done, what, timeout=120)
    finally:
        worker.stop()
        thread.join(120)
    assert not thread.is_alive(), "the worker did not stop within 120 s"


@pytest.mark.browser
def test_a_session_waiting_for_approval_is_released_and_finished_by_other_workers_with_its_cookies(
    postgres_url: str, tmp_path: Path, browser_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkout task asks four approvals. The first two release the worker, and a new one takes
    each over, alternating a local Chromium and the remote one (with no local Chromium to launch):
    the remote worker's "Add to cart" sets the cart cookie, and the next local worker can proceed
    to checkout only with it. From the form on, the session keeps its worker (what was typed lives
    only in the page), which gets the last two approvals itself and places the order."""
    from demo.shop import start_shop
    from demo.tasks import check_answer, load_tasks

    task = next(t for t in load_tasks() if t.id == "checkout-french-press")
    store = SqlStore(fresh_database(postgres_url))
    runs: list[str] = []
    held: list[int] = []  # which requests (1, 2, ...) were approved while a worker held the session
    approved = [0]
    with start_shop() as shop:
        session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path)
        while store.session(session_id).status not in ("succeeded", "failed"):
            assert len(runs) < 4, f"the session took more worker runs than expected: {runs}"
            remote = len(runs) % 2 == 1
            if remote:
                monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "no-chromium-here"))  # it must not launch one
            else:
                monkeypatch.delenv("CHROMIUM_PATH", raising=False)
            runs.append("remote" if remote else "local")
            left = threading.Event()
            worker = Worker(
                store,
                artifacts=tmp_path / "artifacts",
                browser_endpoint=browser_server if remote else None,
                stale_after=LEASE_S,
                poll=0.2,
                on_run=lambda sid, what, left=left: left.set() if what.startswith("left") else None,
            )

            def approve_if_held(worker: Worker = worker, left: threading.Event = left) -> bool:
                """Approve each request once: the status may still read "awaiting" a moment after the
                runner took the approval, so count requests rather than trust the status."""
                info = store.session(session_id)
                if (
                    info.status == "awaiting_approval"
                    and info.lease_owner == worker.owner
                    and requests(store, session_id) > approved[0]
                ):
                    queue_command(store, session_id, {"kind": "approve"})
                    approved[0] += 1
                    held.append(approved[0])
                return left.is_set()

            run_worker_until(worker, approve_if_held, f"worker run {len(runs)} to leave the session")
            if store.session(session_id).status == "awaiting_approval" and requests(store, session_id) > approved[0]:
                queue_command(store, session_id, {"kind": "approve"})
                approved[0] += 1

    events = store.load(session_id)
    asked = [e.node_id for e in events if e.kind is Kind.APPROVAL_REQUESTED]
    answer = next(e.payload.final_answer for e in events if e.kind is Kind.SESSION_FINISHED)  # type: ignore[attr-defined]
    assert store.session(session_id).status == "succeeded", (runs, asked)
    # The last two requests come while the worker keeps the session (a first one may too, when the
    # approval was queued before the worker had let go: it is then applied by the next worker).
    assert runs == ["local", "remote", "local"] and len(asked) == 4 and {3, 4} <= set(held), (runs, asked, held)
    assert check_answer(task, answer).passed, answer
    assert ended_exactly_once(store, session_id) == []
    store.close()


@pytest.mark.browser
def test_a_worker_without_a_local_chromium_runs_a_whole_demo_task_through_a_browser_server(
    postgres_url: str, tmp_path: Path, browser_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's environment has no Chromium it could launch ($CHROMIUM_PATH names no file, and
    PATH holds no browser): every page of the task is the browser server's."""
    from demo.shop import start_shop
    from demo.tasks import check_answer, load_tasks

    task = next(t for t in load_tasks() if t.id == "cheapest-espresso")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "no-chromium-here"))
    monkeypatch.setenv("PATH", str(empty))
    probe = subprocess.run(  # the worker's environment, asked which Chromium it would launch
        [sys.executable, "-c", "from planner.browser.chromium import find_chromium; print(find_chromium())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert probe.stdout.strip() == "None", probe.stdout
    url = fresh_database(postgres_url)
    store = SqlStore(url)
    artifacts = tmp_path / "artifacts"
    with start_shop() as shop:
        session_id = create_session(store, task.task, "demo", start_url=shop.url + task.start_path)
        worker = spawn("worker", "--db", url, "--browser-endpoint", browser_server, "--artifacts", str(artifacts))
        try:
            wait_until(
                lambda: store.session(session_id).status in ("succeeded", "failed", "paused"),
                "the worker to run the task to its end",
                timeout=120,
            )
        finally:
            worker.send_signal(signal.SIGTERM)
            out, err = finish(worker, "the worker to stop on SIGTERM")
    state = load_state(store, session_id)
    actions = [e.payload for e in store.load(session_id) if e.kind is Kind.ACTION_EXECUTED]
    store.close()
    assert state.status.value == "succeeded", (state.reason, err[-1000:])
    assert check_answer(task, state.final_answer).passed, state.final_answer
    in_browser = [a for a in actions if not is_note(a.action)]  # type: ignore[attr-defined]
    assert in_browser and all(a.ok and a.screenshot and Path(a.screenshot).is_file() for a in in_browser), actions
    assert worker.returncode == 0 and json.loads(out.strip().splitlines()[-1])["runs"] == 1, err[-1000:]


def chromium_browsers(root: int) -> list[int]:
    """The Chromium browser processes (not their renderers and helpers) among `root`'s descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            children.setdefault(int((entry / "stat").read_text().rpartition(")")[2].split()[1]), []).append(
                int(entry.name)
            )
        except (OSError, ValueError, IndexError):
            continue
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command[0].endswith(b"/chromium") and not any(part.startswith(b"--type=") for part in command):
            found.append(pid)
    return found


@pytest.mark.browser
def test_a_worker_with_a_shared_browser_runs_its_sessions_in_one_chromium(postgres_url: str, tmp_path: Path) -> None:
    """Three shop sessions at once on a `--shared-browser` worker: its process tree has one Chromium
    while they run (a worker without the option starts one per session), and each session opens its
    pages and ends with a screenshot of every one."""
    from demo.shop import start_shop

    url = fresh_database(postgres_url)
    store = SqlStore(url)
    with start_shop() as shop:
        pages = ["/category/printers", "/category/headphones", "/category/backpacks"]
        nodes = {
            TASK: {"type": "AND", "children": [f"open {n}" for n in range(3)]},
            **{f"open {n}": {"type": "ACTION", "action": f"goto [{shop.url}{page}]"} for n, page in enumerate(pages)},
        }
        latency = {"model_median_s": 0.3, "model_spread": 0.2}  # slow enough that the three overlap
        sessions = []
        for n in range(3):
            script = tmp_path / f"script-{n}.json"
            script.write_text(json.dumps({"nodes": nodes, "final_answer": "opened", "latency": {**latency, "seed": n}}))
            sessions.append(create_session(store, TASK, f"script:{script}", start_url=shop.url + "/"))
        worker = spawn(
            "worker", "--db", url, "--concurrency", "3", "--shared-browser", "--artifacts", str(tmp_path / "artifacts")
        )
        try:
            seen: set[int] = set()  # every Chromium browser the worker ran while the sessions did

            def ended() -> bool:
                seen.update(chromium_browsers(worker.pid))
                return all(store.session(s).status in ("succeeded", "failed", "paused") for s in sessions)

            wait_until(ended, "the three sessions to end", timeout=120)
        finally:
            worker.send_signal(signal.SIGTERM)
            _, err = finish(worker, "the worker to stop on SIGTERM")
    assert len(seen) == 1, f"{len(seen)} Chromium browsers for three sessions"
    for session_id in sessions:
        actions = [e.payload for e in store.load(session_id) if e.kind is Kind.ACTION_EXECUTED]
        assert store.session(session_id).status == "succeeded", (store.session(session_id).reason, err[-800:])
        assert len(actions) == 3 and all(a.ok and Path(a.screenshot or "").is_file() for a in actions), actions  # type: ignore[attr-defined]
    store.close()
    assert worker.returncode == 0 and not chromium_browsers(os.getpid()), "the worker left its Chromium running"


@pytest.mark.browser
def test_a_worker_killed_with_sigkill_leaves_no_shared_chromium_behind(postgres_url: str, tmp_path: Path) -> None:
    from demo.shop import start_shop

    url = fresh_database(postgres_url)
    store = SqlStore(url)
    with start_shop() as shop:
        nodes = {TASK: {"type": "AND", "children": [f"open {n}" for n in range(20)]}}  # still running when killed
        nodes |= {f"open {n}": {"type": "ACTION", "action": f"goto [{shop.url}/category/printers]"} for n in range(20)}
        script = tmp_path / "script.json"
        script.write_text(json.dumps({"nodes": nodes, "latency": {"model_median_s": 0.5, "model_spread": 0}}))
        create_session(store, TASK, f"script:{script}", start_url=shop.url + "/")
        worker = spawn("worker", "--db", url, "--shared-browser", "--artifacts", str(tmp_path / "artifacts"))
        try:
            wait_until(lambda: chromium_browsers(worker.pid), "the worker's shared Chromium to start", timeout=60)
            browsers = chromium_browsers(worker.pid)
        finally:
            worker.kill()
            finish(worker, "the killed worker to exit")
            store.close()
    wait_until(
        lambda: not any(Path(f"/proc/{pid}").exists() for pid in browsers),
        "the shared Chromium to stop after its worker was killed",
        timeout=30,
    )


@pytest.mark.browser
def test_a_shared_browser_that_dies_is_started_again_for_the_actions_that_follow() -> None:
    """The action after the kill fails on the dead page, or (when Playwright heard of the death first)
    runs on a new Chromium; the one after it runs on a new Chromium."""
    from demo.shop import start_shop
    from planner.browser.environment import BrowserEnvironment

    server = BrowserServer()
    with start_shop() as shop, BrowserEnvironment(shop.url + "/", browser_endpoint=server) as env:
        try:
            assert env.execute(f"goto [{shop.url}/category/printers]").ok
            first = chromium_browsers(os.getpid())
            for pid in first:
                os.kill(pid, signal.SIGKILL)
            during = env.execute(f"goto [{shop.url}/category/headphones]")
            after = env.execute(f"goto [{shop.url}/category/backpacks]")
            again = chromium_browsers(os.getpid())
        finally:
            server.stop()
    assert len(first) == 1 and (during.ok or "closed" in (during.error or "")), during
    assert after.ok and after.page.url.endswith("/category/backpacks"), after
    assert len(again) == 1 and again != first, "a new shared Chromium serves the next action"


# -- PostgreSQL: a worker sleeps until NOTIFY wakes it ---------------------------------------------------------


def _on(url: str, sql: str, **params: str) -> int | None:
    """One statement on a connection of its own; its first value, if any."""
    engine = sa.create_engine(database_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()
    finally:
        engine.dispose()


def listening(url: str) -> int | None:
    """How many connections to this database are LISTENing for runnable sessions (`wait_for_work`'s)."""
    return _on(
        url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = :listen",
        listen="LISTEN andor_runnable",
    )


def test_a_worker_is_woken_by_notify_to_take_a_new_session_long_before_its_poll(
    postgres_url: str, tmp_path: Path
) -> None:
    """The worker looks only every 600 s here: a session created while it sleeps is taken at once only
    if the NOTIFY sent with it wakes the worker (a broken LISTEN leaves it asleep, and this test fails)."""
    url = fresh_database(postgres_url)
    store = SqlStore(url)
    worker = Worker(SqlStore(url), artifacts=tmp_path / "artifacts", poll=600.0)
    thread = threading.Thread(target=worker.run, name="test-worker")
    thread.start()
    try:
        wait_until(lambda: listening(url) == 1, "the worker, finding nothing to run, to LISTEN", timeout=120)
        session_id = create_session(store, TASK, script_model(tmp_path), start_url=DRY_START)
        wait_until(lambda: worker.runs == 1, "the NOTIFY to wake the worker (its poll is 600 s)", timeout=60)
        wait_until(
            lambda: store.session(session_id).status == "succeeded",
            "the woken worker to finish the session",
            timeout=120,
        )
        assert ended_exactly_once(store, session_id) == []
    finally:
        worker.stop()
        _on(url, "SELECT pg_notify('andor_runnable', 'stop')")  # it sleeps until a sign: this one lets it see the stop
        thread.join(120)
        worker.store.close()
        store.close()
    assert not thread.is_alive(), "the worker to stop once woken"


# -- the console's status line ---------------------------------------------------------------------------------


def test_a_worker_running_sixty_sessions_at_once_holds_no_more_connections_than_its_pool(
    postgres_url: str, tmp_path: Path
) -> None:
    """Sixty sessions whose model takes a few tenths of a second per call, on one worker of concurrency
    60: all sixty are held at once, and the worker's connections (by `application_name`) never exceed
    its pool and the one it LISTENs on."""
    url = fresh_database(postgres_url)
    store = SqlStore(url)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({**SCRIPT, "latency": {"model_median_s": 0.2, "model_spread": 0.2}}))
    sessions = [create_session(store, TASK, f"script:{script}", start_url=DRY_START) for _ in range(60)]
    worker = spawn("worker", "--db", url, "--concurrency", "60")
    held, connections = [0], [0]

    def ended() -> bool:
        infos = [info for info in store.sessions() if info.id in sessions]
        held[0] = max(held[0], sum(info.lease_owner is not None for info in infos))
        mine = _on(url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = :me", me=f"andor:{worker.pid}")
        connections[0] = max(connections[0], mine or 0)
        return all(info.status == "succeeded" for info in infos)

    try:
        wait_until(ended, "the sixty sessions to succeed", timeout=120)
    finally:
        worker.send_signal(signal.SIGTERM)
        finish(worker, "the worker to stop on SIGTERM")
        store.close()
    assert held[0] == 60, f"at most {held[0]} of the sixty sessions were held at once"
    assert 0 < connections[0] <= POOL_SIZE + POOL_OVERFLOW + 1, f"the worker held {connections[0]} connections"


def test_the_consoles_status_line_names_the_worker_that_runs_the_session(
    app_db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """In workers mode the status line says which worker holds a running session ("run by host:pid"
    of its lease), and that it waits for one once the lease is released."""

    from sessions.client.markdown import md
    from sessions.store.sql import open_store

    monkeypatch.setenv("ANDOR_RUNNER", "workers")
    store = open_store(app_db)
    session_id = create_session(store, TASK, script_model(tmp_path), start_url=DRY_START)
    lease = store.claim(session_id, "worker-host:4242:wdeadbeef", time.time(), 15.0, pid=4242)
    assert lease is not None
    at = console_app(session_id)
    at.run()
    assert not at.exception, at.exception
    shown = "\n".join(m.value for m in at.markdown)
    assert f" · run by {md('worker-host:4242')}" in shown, shown
    store.release(session_id, lease)
    at.run()
    shown = "\n".join(m.value for m in at.markdown)
    assert " · waiting for a runner to take it" in shown and "run by" not in shown, shown
    store.close()


# -- SQLite: workers poll; submit ------------------------------------------------------------------------------


def test_submit_queues_sessions_that_a_worker_runs_on_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    model = script_model(tmp_path)
    submitted = [last_json(cli("--db", db, "submit", "--task", TASK, "--model", model)) for _ in range(3)]
    assert all(s["status"] == "queued" for s in submitted), submitted
    worker = spawn("worker", "--db", db, "--concurrency", "2")
    try:
        wait_until(
            lambda: all(s["status"] == "succeeded" for s in last_json(cli("--db", db, "list"))["sessions"]),
            "the worker to finish the three submitted sessions",
            timeout=120,
        )
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = finish(worker, "the worker to stop on SIGTERM")
    assert worker.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["runs"] == 3


def test_a_worker_that_stops_hands_its_sessions_back_running(tmp_path: Path) -> None:
    """SIGTERM (`Worker.stop`) ends each run at a step boundary with `hand_over`: the session stays
    running with no lease, so the next worker continues it at once instead of it waiting paused."""
    store = SqlStore(f"sqlite:///{tmp_path / 'store.db'}")
    session_id = create_session(store, TASK, script_model(tmp_path), start_url=DRY_START)
    boundaries = iter(range(1_000))
    Runner(store, session_id).run(lambda: next(boundaries) >= 5, hand_over=True)
    info = store.session(session_id)
    assert (info.status, info.lease_owner, info.steps) == ("running", None, 5), info
    assert not [e for e in store.load(session_id) if e.kind is Kind.SESSION_STATUS], "the stop paused the session"
    worker = Worker(store, poll=0.05)
    run_worker_until(worker, lambda: store.session(session_id).status == "succeeded", "a worker to finish it")
    assert ended_exactly_once(store, session_id) == []
    store.close()


def test_worker_refuses_a_browser_endpoint_that_is_not_a_websocket_address(tmp_path: Path) -> None:
    result = cli("--db", str(tmp_path / "s.db"), "worker", "--browser-endpoint", "http://127.0.0.1:3000/", check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("error: argument --browser-endpoint: give a browser server's ws://")
    assert len(result.stderr.strip().splitlines()) == 1
