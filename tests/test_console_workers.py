"""The console as a client of workers (`ANDOR_RUNNER=workers`), its fleet view, and the change feed that
spares it the store reads of sessions that did not change (on a real PostgreSQL server)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, SCRIPTS
from console_helpers import app, console_app, markdown_text
from postgres import fresh_database
from waiting import wait_until

from planner.config import Breakpoint
from planner.events import Kind
from planner.state import Recorder
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.store.feed import ChangeFeed, Polling, open_feed
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore, open_store
from sessions.worker.pool import WorkerClient
from sessions.worker.processes import Worker
from sessions.worker.runner import Runner

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


def runner_threads() -> list[str]:
    """The console's own runner threads (`RunnerPool` names them runner-ID)."""
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("runner-")]


@pytest.fixture
def workers_db(app_db: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANDOR_RUNNER", "workers")
    return app_db


@pytest.fixture
def start_worker(workers_db: str, tmp_path: Path) -> Iterator[Callable[[], Worker]]:
    """Starts a worker on the console's database in a thread of the test; stopped after the test."""
    started: list[tuple[Worker, threading.Thread]] = []

    def start() -> Worker:
        worker = Worker(open_store(workers_db), artifacts=tmp_path / "artifacts", poll=0.1)
        thread = threading.Thread(target=worker.run, name="test-worker", daemon=True)
        thread.start()
        started.append((worker, thread))
        return worker

    yield start
    for worker, thread in started:
        worker.stop()
        thread.join(30)
        assert not thread.is_alive(), "the test's worker to stop"
        worker.store.close()


def test_in_workers_mode_a_started_session_is_queued_and_a_command_is_applied_by_a_worker(
    workers_db: str, start_worker: Callable[[], Worker]
) -> None:
    from ui.context import console

    at = app()
    assert isinstance(console().client.runners, WorkerClient), "ANDOR_RUNNER=workers gives the workers' client"
    at.selectbox(key="new_task_choice").select("Your own task…")
    at.text_area(key="new_task_text").input(BROWNIE_TASK)
    at.text_input(key="new_start_url").input("")
    at.text_input(key="new_model").input(BROWNIE)
    at.multiselect(key="new_breakpoints").select(Breakpoint.AFTER_EXPANSION)
    at.form_submit_button(key="start_session").click()
    at.run()
    assert not at.exception, at.exception
    store = open_store(workers_db)
    [info] = store.sessions()
    assert (info.status, info.lease_owner) == ("running", None), "created runnable, for a worker to take"
    assert runner_threads() == [], "the console starts no runner in workers mode"
    assert "waiting for a runner to take it" in markdown_text(at)

    start_worker()
    wait_until(lambda: store.session(info.id).status == "paused", "the worker to run the session to its breakpoint")
    at.run()
    assert "plan review" in markdown_text(at), markdown_text(at)
    inbox = at.button(key=f"inbox_{info.id}")
    assert "plan review" in inbox.label, "the attention inbox lists a worker's session stopped at its breakpoint"
    at.button(key="ctl_resume").click()
    at.run()
    assert not at.exception, at.exception
    assert runner_threads() == [], "a command starts no runner in workers mode either"
    state = wait_until(
        lambda: (state := load_state(store, info.id)).metrics.commands_applied >= 1 and state,
        "the worker to apply the console's resume",
    )
    assert any(e.kind is Kind.COMMAND_APPLIED for e in store.load(info.id)), state.status
    wait_until(lambda: store.session(info.id).lease_owner is None, "the worker to leave the session at its next stop")
    at.run()
    assert not at.exception, at.exception


def test_a_runner_choice_that_names_nothing_is_refused_in_one_sentence(
    app_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANDOR_RUNNER", "threads")
    at = console_app()
    at.run()
    assert not at.exception, at.exception
    [error] = at.error
    assert error.value.startswith("ANDOR_RUNNER='threads' is not a way of running sessions; use 'embedded'"), (
        error.value
    )
    monkeypatch.delenv("ANDOR_RUNNER")  # the fixture's teardown opens the console to shut it down


def test_the_fleet_table_shows_worker_step_rate_spend_and_waiting_time(workers_db: str, tmp_path: Path) -> None:
    store = open_store(workers_db)
    done = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    Runner(store, done, artifacts=tmp_path / "artifacts").run()
    held = create_session(store, "a held task", BROWNIE, start_url="dry://start")
    lease = store.claim(held, "hostA:4242:wdeadbeef", time.time(), 15.0, pid=4242)
    assert lease is not None
    recorder = Recorder(load_state(store, held))
    recorder.record(Kind.SESSION_STATUS, status="running", reason=None)
    store.append(held, recorder.take(), status="running", reason=None, steps=2, cost_usd=0.37, lease=lease)
    waiting = create_session(store, "a paused task", BROWNIE, start_url="dry://start", paused=True)
    at = app()
    at.session_state["tab"] = "All sessions"
    at.run()
    [table] = [d.value for d in at.dataframe if "worker" in d.value.columns]
    rows = table.set_index("id")
    assert {"status", "worker", "actions/min", "spend", "waiting"} <= set(table.columns)
    assert rows.loc[held, "worker"] == "hostA:4242", "the lease holder as host:pid"
    assert rows.loc[waiting, "worker"] == "—" and rows.loc[done, "worker"] == "—"
    assert rows.loc[held, "spend"] == "$0.3700"
    assert rows.loc[done, "actions/min"] > 0, "the finished session acted moments ago"
    assert rows.loc[held, "actions/min"] == 0
    assert rows.loc[waiting, "waiting"].endswith("s") and rows.loc[held, "waiting"] == "", "only a pause waits"
    assert store.recent_actions(0.0)[done] == load_state(store, done).metrics.actions > 0, (
        "the rate counts the log's actions"
    )


# -- the change feed, on a real PostgreSQL server -----------------------------------------------------------------


def test_the_change_feed_hears_a_write_from_another_connection(postgres_url: str) -> None:
    url = fresh_database(postgres_url)
    reader, writer = SqlStore(url), SqlStore(url)
    feed = open_feed(reader)
    try:
        assert isinstance(feed, ChangeFeed), "PostgreSQL gives a LISTEN feed"
        assert feed.wait_listening(10), "the feed to LISTEN"
        feed.resync = 3600.0
        quiet = create_session(writer, "a quiet task", BROWNIE, start_url="dry://start", paused=True)
        busy = create_session(writer, "a busy task", BROWNIE, start_url="dry://start", paused=True)
        wait_until(lambda: feed.heard >= 2, "the two creations to be heard")
        before, quiet_before = feed.stamp(busy), feed.stamp(quiet)
        time.sleep(0.3)
        assert feed.stamp(busy) == before, "nothing written, nothing heard"
        recorder = Recorder(load_state(writer, busy))
        recorder.record(Kind.SESSION_STATUS, status="paused", reason="a note from elsewhere")
        writer.append(busy, recorder.take(), status="paused", reason="a note from elsewhere", steps=0)
        appended = wait_until(
            lambda: feed.stamp(busy) != before and feed.stamp(busy), "the append on the other connection to be heard"
        )
        queue_command(writer, busy, {"kind": "resume"})
        wait_until(lambda: feed.stamp(busy) != appended, "the enqueue on the other connection to be heard")
        assert feed.stamp(quiet) == quiet_before, "another session's change leaves this one's stamp"
    finally:
        feed.close()
        reader.close()
        writer.close()
    assert isinstance(open_feed(open_store(":memory:")), Polling), "SQLite has no feed: every look is a change"


def test_a_console_on_postgresql_reads_no_session_state_while_nothing_changes(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, on_loopback: None
) -> None:
    import streamlit as st

    from ui.context import console

    url = fresh_database(postgres_url)
    store = SqlStore(url)
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    monkeypatch.setenv("ANDOR_DB", url)
    monkeypatch.setenv("ANDOR_SHOP", "0")
    monkeypatch.setenv("ANDOR_RUNNER", "workers")
    st.cache_resource.clear()
    try:
        at = console_app()
        ctx = console()
        assert isinstance(ctx.client.changes, ChangeFeed) and ctx.client.changes.wait_listening(10), (
            "the console's feed to LISTEN"
        )
        ctx.client.changes.resync = 3600.0
        at.run()
        assert not at.exception, at.exception
        at.run()
        reads = ctx.client.store_reads
        for _ in range(3):
            at.run()
        assert ctx.client.store_reads == reads, "redraws of an unchanged session read nothing of its state"
        heard = ctx.client.changes.heard
        queue_command(store, session_id, {"kind": "step"})
        wait_until(lambda: ctx.client.changes.heard > heard, "the console's feed to hear the queued command")
        at.run()
        assert ctx.client.store_reads > reads, "a change is read"
        assert "Queued for the next step boundary: step" in markdown_text(at) or any(
            "Queued for the next step boundary: step" in c.value for c in at.caption
        )
    finally:
        st.cache_resource.clear()
        store.close()
