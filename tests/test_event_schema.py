"""The event log's schema: typed payloads, versions kept in traces, and an old log read through an upcaster."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from planner.browser.dry import DRY_START, DryEnvironment
from planner.commands import (
    EditAction,
    Inject,
    Pause,
    Prune,
    Reopen,
    Resume,
    SetBreakpoints,
    SetPlan,
    Undo,
    apply_command,
)
from planner.config import Breakpoint, EngineConfig
from planner.engine import Engine
from planner.events import PAYLOADS, SCHEMA_VERSIONS, Event, Kind, Observed, upgrade
from planner.inputs import InputError
from planner.models.replay import ReplayModel, recorded_calls
from planner.models.scripted import Script, ScriptedModel
from planner.state import Recorder, RunStatus, SessionState, replay
from planner.tree import ROOT_ID
from sessions.backends import _trace_events, build_backend, prepare_model
from sessions.client.export import trace
from sessions.errors import UnknownModel
from sessions.store.sql import SqlStore, database_url


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


# -- model_call version 2: the question a call asked was stored as `operator` --------------------------


def _brownie_run() -> tuple[SessionState, list[Event]]:
    """A scripted run to success: its model calls are the ones an older log holds."""
    from conftest import BROWNIE_TASK, load, run_script

    state, log, _engine = run_script(load("brownie.json"), BROWNIE_TASK, EngineConfig())
    assert state.status is RunStatus.SUCCEEDED and any(e.kind is Kind.MODEL_CALL for e in log)
    return state, log


def _as_operator(data: dict[str, Any]) -> dict[str, Any]:
    """A model call's payload (or a recorded answer) as the code before version 2 wrote it."""
    return {("operator" if key == "question" else key): value for key, value in data.items()}


def test_upgrade_moves_a_model_calls_operator_to_question() -> None:
    old = {"operator": "expand", "attempt": 2, "ok": True}
    assert upgrade("model_call", 1, old) == {"question": "expand", "attempt": 2, "ok": True}
    assert old == {"operator": "expand", "attempt": 2, "ok": True}, "the stored payload is left as it was"
    assert SCHEMA_VERSIONS["model_call"] == 2


def test_an_old_log_with_version_1_model_calls_loads_and_folds_to_the_same_state(tmp_path: Path) -> None:
    from conftest import snapshot

    state, log = _brownie_run()
    db = tmp_path / "old.db"
    store = SqlStore(database_url(db))
    store.create_session("s1", state.task, "script", log, status="running")
    store.close()
    calls = [e for e in log if e.kind is Kind.MODEL_CALL]
    with sqlite3.connect(db) as conn:  # the rows as the code before version 2 wrote them
        for e in calls:
            old = json.dumps(_as_operator(e.data))
            conn.execute("UPDATE events SET version = 1, data = ? WHERE seq = ?", (old, e.seq))
    store = SqlStore(database_url(db))
    try:
        loaded = store.load("s1")
    finally:
        store.close()
    read = [e for e in loaded if e.kind is Kind.MODEL_CALL]
    assert [(e.seq, e.version, e.payload) for e in read] == [(e.seq, 2, e.payload) for e in calls]
    assert read[0].data["question"] == "constraints" and "operator" not in read[0].data
    assert snapshot(replay(loaded)) == snapshot(state)


def test_a_trace_with_version_1_model_calls_reads_them_and_replays_them(tmp_path: Path) -> None:
    state, log = _brownie_run()
    written = trace("s1", state, log)
    for row in written["events"]:
        if row["kind"] == "model_call":
            row["version"], row["detail"] = 1, _as_operator(row["detail"])
    path = tmp_path / "old-trace.json"
    path.write_text(json.dumps(written))
    events = _trace_events(str(path))
    assert [(e.kind, e.payload) for e in events] == [(e.kind, e.payload) for e in log]
    answers = prepare_model(f"replay:{path}")["calls"]
    assert answers == [call.to_json() for call in recorded_calls(log)] and "question" in answers[0]


def test_a_replay_session_whose_answers_name_their_operator_still_answers() -> None:
    """A `replay:` session keeps the answers it replays in its first event; a session created before
    version 2 names each answer's question `operator`. Resumed, it answers with them all the same."""
    from conftest import snapshot

    state, log = _brownie_run()
    old = [_as_operator(call.to_json()) for call in recorded_calls(log)]
    assert all("operator" in call and "question" not in call for call in old)
    resumed = SessionState()
    rec = Recorder(resumed)
    rec.record(Kind.SESSION_CREATED, task=state.task, model="replay:s0", model_data={"calls": old}, start_url=DRY_START)
    backend = build_backend(resumed)
    assert isinstance(backend.model, ReplayModel)
    engine = Engine(resumed, backend.model, backend.env)
    for _ in range(500):
        if not engine.step():
            break
    assert resumed.status is RunStatus.SUCCEEDED, resumed.reason
    assert snapshot(resumed)["nodes"] == snapshot(state)["nodes"]


def _every_kind() -> list[Event]:
    """Events of every kind, made the way the product makes them: engine runs, operator commands, and
    the two kinds only the runner records (a fork, a forced alternative before a run) by hand, as it does;
    a found secret too (the dry environment has no password field)."""
    from conftest import BROWNIE_TASK, load, new_state, run_script

    events = run_script(load("brownie_fail.json"), BROWNIE_TASK, EngineConfig())[1]
    s = Script.model_validate(
        {
            "nodes": {
                "t": {"type": "AND", "children": ["look", "compare", "buy"]},
                "look": {"type": "ACTION", "action": "click [1]"},
                "compare carefully": {"type": "ACTION", "action": "click [2]"},
                "buy": {"type": "ACTION", "action": "click [7]"},
                "mine": {"type": "ACTION", "action": "click [4]"},
            },
            "updates": {"click [1]": {"prune": ["mine"], "rewrite": {"compare": "compare carefully"}}},
        }
    )
    state, log = new_state("t")
    engine = Engine(state, ScriptedModel(s), DryEnvironment(), guard=lambda a, _t: "buys" if a == "click [7]" else None)
    log += engine.step()  # the root's expansion
    for command in (
        Inject(parent="0", goals=["mine"]),
        SetBreakpoints(breakpoints=[Breakpoint.ON_FAILURE]),
        Prune(node="0", reason="not needed"),  # refused: the root cannot be pruned
        Prune(node="0.4", reason="not needed"),
        Reopen(node="0.4"),
        Inject(parent="0", goals=["extra"]),
        Undo(),
        SetPlan(node="0", children=["0.1", "0.2", "0.4", "0.3"]),
        Undo(),
        Pause(),
        Resume(),
    ):
        log += apply_command(state, command)
    for _ in range(60):
        log += engine.step()
        if state.status is RunStatus.AWAITING_APPROVAL:
            log += apply_command(state, EditAction(action="click [8]"))
    assert state.status is RunStatus.SUCCEEDED, state.reason
    rec = Recorder(state)
    rec.record(Kind.ALTERNATIVE_FORCED, "0", child="0.2")
    rec.record(Kind.SESSION_FORKED, from_session="s0", at_seq=3)
    rec.record(Kind.DIAGNOSED, model="demo", error="none")
    rec.record(Kind.SECRET_FOUND, "0.1", value="hunter2-x")  # the engine's before a password field (test_secrets.py)
    rec.record(Kind.ANSWER_JUDGED, accepted=True, reason="checked by hand", by="ann")  # sessions.client.verdict's
    return [*events, *log, *rec.take()]


def test_events_the_product_makes_equal_their_validated_round_trip_for_every_kind() -> None:
    events = _every_kind()
    assert {e.kind for e in events} == set(Kind), "a kind is missing from the sample: extend _every_kind"
    for e in events:
        text = e.payload.model_dump_json()
        stored = Event.from_json(e.seq, e.kind.value, e.node_id, text, e.version, e.at)
        traced = Event.from_data(e.seq, e.kind.value, e.node_id, json.loads(text), e.version, e.at)
        assert stored == traced == e, f"event {e.seq} ({e.kind.value}) changes when read back"
        assert repr(stored.payload) == repr(e.payload), f"event {e.seq} ({e.kind.value}) holds other types"


def test_a_stored_row_that_does_not_fit_its_kind_is_refused_in_one_sentence(tmp_path: Path) -> None:
    state, log = _log()
    db = tmp_path / "bad.db"
    store = SqlStore(database_url(db))
    store.create_session("s1", state.task, "script", log, status="running")
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE events SET data = ? WHERE seq = 3", (json.dumps({"type": "ACTION", "colour": "red"}),))
    store = SqlStore(database_url(db))
    try:
        with pytest.raises(InputError) as refused:
            store.load("s1")
    finally:
        store.close()
    assert (
        str(refused.value) == "event 3 (node_expanded) does not fit its schema: colour: Extra inputs are not permitted"
    )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"seq": 2, "kind": "note_added", "node_id": None, "detail": {"text": 5, "x": 1}},
            "event 2 (note_added) does not fit its schema: text: Input should be a valid string (and 1 more problem)",
        ),
        ({"seq": 2, "kind": "teleported", "node_id": None, "detail": {}}, "event 2 has an unknown kind, teleported"),
        (
            {"seq": 2, "kind": "observed", "node_id": None, "detail": [], "version": 1},
            "event 2 (observed) has a payload that is not an object",
        ),
        (
            {"seq": 2, "kind": "observed", "node_id": None, "detail": {}, "version": 0},
            "event 2 (observed) has schema version 0, which no upgrade reads",
        ),
    ],
)
def test_a_trace_whose_event_does_not_fit_is_refused_in_one_sentence(tmp_path: Path, row: dict, message: str) -> None:
    state, log = _log()
    written = trace("s1", state, log[:1])
    written["events"].append(row)
    path = tmp_path / "bad-trace.json"
    path.write_text(json.dumps(written))
    with pytest.raises(UnknownModel) as refused:
        _trace_events(str(path))
    said = str(refused.value)  # the path is clamped when long, so only its start is certain
    assert said.startswith(f"cannot replay '{str(path)[:20]}") and said.endswith(f"': {message}"), said
    assert "\n" not in str(refused.value)


def test_secrets_need_no_upgrade_a_session_created_before_them_declares_none() -> None:
    """`session_created` gained `secrets` with a default (no version bump: an older payload without it
    reads as declaring none), and `secret_found` is a new kind at version 1, so no older row can hold it."""
    _state, log = _log()
    old = {k: v for k, v in log[0].data.items() if k != "secrets"}
    read = Event.from_json(1, "session_created", None, json.dumps(old), 1)
    assert read.payload.secrets == {} and read.version == SCHEMA_VERSIONS["session_created"] == 1  # type: ignore[attr-defined]
    assert replay([read]).secrets.declared == {}
    assert SCHEMA_VERSIONS["secret_found"] == 1
