"""The event log's schema: typed payloads, versions kept in traces, and an old log read through an upcaster."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from planner.events import PAYLOADS, SCHEMA_VERSIONS, Kind, Observed, upgrade
from planner.state import Recorder, SessionState, replay
from planner.tree import ROOT_ID
from sessions.backends import _trace_events
from sessions.export import trace
from sessions.sql import SqlStore, database_url


def _log() -> tuple[SessionState, list]:
    """A short session whose observation plans an action ahead for a node not yet expanded."""
    state = SessionState()
    rec = Recorder(state)
    rec.record(Kind.SESSION_CREATED, task="buy a kettle", start_url="http://shop.test/")
    rec.record(
        Kind.NODE_EXPANDED,
        ROOT_ID,
        type="AND",
        children=[{"id": "0.1", "description": "search"}, {"id": "0.2", "description": "open the first result"}],
    )
    rec.record(Kind.NODE_EXPANDED, "0.1", type="ACTION", action="type [3] kettle")
    rec.record(Kind.ACTION_EXECUTED, "0.1", action="type [3] kettle", ok=True, url="http://shop.test/?q=kettle")
    rec.record(
        Kind.OBSERVED,
        "0.1",
        summary="results",
        proposals=[{"node": "0.2", "action": "click [7]"}],
        candidates=[{"name": "Kettle", "fields": {"price": "$20"}}],
    )
    return state, rec.take()


def test_every_kind_has_one_payload_model_with_its_version() -> None:
    assert set(PAYLOADS) == set(Kind)
    assert all(model.KIND is kind and SCHEMA_VERSIONS[kind] == model.VERSION for kind, model in PAYLOADS.items())


def test_a_field_no_kind_declares_is_refused_where_the_event_is_made() -> None:
    rec = Recorder(SessionState())
    with pytest.raises(ValidationError):
        rec.record(Kind.SESSION_CREATED, task="t", colour="red")


def test_enums_are_stored_as_their_values_whatever_the_caller_passed() -> None:
    _state, log = _log()
    created = log[0].data
    assert created["status"] == "running" and created["config"]["max_steps"] == 300
    assert log[1].data["type"] == "AND" and log[1].data["origin"] == "planner"


def test_an_old_log_with_version_1_observations_loads_and_folds_to_the_same_state(tmp_path: Path) -> None:
    state, log = _log()
    db = tmp_path / "old.db"
    store = SqlStore(database_url(db))
    store.create_session("s1", state.task, "script", log, status="running")
    store.close()
    old = {k: v for k, v in log[-1].data.items() if k != "proposals"}
    old["ahead"] = [{"node": "0.2", "action": "click [7]"}]
    with sqlite3.connect(db) as conn:  # the row as the code before version 2 wrote it
        conn.execute("UPDATE events SET version = 1, data = ? WHERE seq = ?", (json.dumps(old), log[-1].seq))
    store = SqlStore(database_url(db))
    try:
        loaded = store.load("s1")
    finally:
        store.close()
    observed = loaded[-1].payload
    assert isinstance(observed, Observed) and loaded[-1].version == 2
    assert [(p.node, p.action) for p in observed.proposals] == [("0.2", "click [7]")]
    rebuilt = replay(loaded)
    assert rebuilt.proposals == state.proposals == {"0.2": "click [7]"}
    assert rebuilt.candidates == state.candidates and rebuilt.seq == state.seq


def test_upgrade_renames_ahead_and_leaves_current_payloads_alone() -> None:
    assert upgrade("observed", 1, {"summary": "s", "ahead": []}) == {"summary": "s", "proposals": []}
    assert upgrade("observed", 2, {"proposals": []}) == {"proposals": []}


def test_a_trace_keeps_versions_and_round_trips(tmp_path: Path) -> None:
    state, log = _log()
    written = trace("s1", state, log)
    assert [row["version"] for row in written["events"]] == [event.version for event in log]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(written))
    events = _trace_events(str(path))
    assert [(e.kind, e.version, e.payload) for e in events] == [(e.kind, e.version, e.payload) for e in log]


def test_a_trace_written_before_versions_reads_its_observations_as_version_1(tmp_path: Path) -> None:
    state, log = _log()
    written = trace("s1", state, log)
    for row in written["events"]:
        del row["version"]
        if row["kind"] == "observed":
            row["detail"]["ahead"] = row["detail"].pop("proposals")
    path = tmp_path / "old-trace.json"
    path.write_text(json.dumps(written))
    assert replay(_trace_events(str(path))).proposals == {"0.2": "click [7]"}
