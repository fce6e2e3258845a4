"""A follower of a session's log read from two threads at once folds the log once (`sessions.client.view`).

A console tab's replaced run goes on in its old script thread until its next Streamlit call, and the
new run's thread reads the same follower: opening a 5,016-node session's page twice failed with
"event 1 applied after 29902" (`python -m bench.console`), the second fold starting from event 1
into the first's state. Here the store's read is slowed so that the two reads overlap every time.
"""

from __future__ import annotations

import threading
import time

from conftest import BROWNIE_TASK, SCRIPTS

from planner.events import Event
from sessions.client.creation import create_session
from sessions.client.view import Follower
from sessions.store.feed import Polling, Reads
from sessions.store.sql import SqlStore
from sessions.worker.pool import WorkerClient
from sessions.worker.runner import Runner


class _SlowReads(Reads):
    """Reads whose log read takes a while, as a big log's does."""

    def load(self, session_id: str, *, after: int) -> list[Event]:
        events = super().load(session_id, after=after)
        time.sleep(0.2)
        return events


def test_two_threads_refreshing_one_follower_fold_each_event_once() -> None:
    store = SqlStore("sqlite://")
    session_id = create_session(store, BROWNIE_TASK, f"script:{SCRIPTS / 'brownie.json'}", start_url="dry://start")
    last = Runner(store, session_id).run().seq
    changes = Polling()
    follower = Follower(session_id, _SlowReads(store, changes), changes, WorkerClient())
    failures: list[BaseException] = []

    def read() -> None:
        try:
            follower.refresh()
        except BaseException as error:  # noqa: BLE001 - the test reports whatever the other thread raised
            failures.append(error)

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert failures == [], failures
    assert follower.state.seq == last and follower.state.seq == store.session(session_id).last_seq
