"""An operator's word on a finished run's answer (`sessions.client.verdict`), and the words for what is
known of it: a succeeded run is "answered, not checked" until a check or a person confirms it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BROWNIE_TASK, SCRIPTS

from planner.events import AnswerJudged, Cause
from sessions.cli import main
from sessions.client.creation import create_session
from sessions.client.export import markdown_report, trace
from sessions.client.verdict import judge_answer, standing
from sessions.errors import SessionInputError
from sessions.store.reading import load_events, load_state
from sessions.store.sql import SqlStore, open_store
from sessions.worker.runner import Runner

BROWNIE = f"script:{SCRIPTS / 'brownie.json'}"


def _finished(store: SqlStore) -> str:
    session_id = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start")
    state = Runner(store, session_id).run()
    assert state.status.value == "succeeded" and state.final_answer, (state.status, state.final_answer)
    return session_id


def test_a_succeeded_run_is_only_answered_until_an_operator_accepts_it_and_everything_says_so() -> None:
    store = SqlStore("sqlite://")
    session_id = _finished(store)
    info = store.session(session_id)
    assert standing(info.status, info.cause) == "answered, not checked", "no check: the planner's belief"

    stored = judge_answer(store, session_id, accepted=True, reason="  the recipe is vegan and rated 4.6 ", by="ann")
    assert stored == AnswerJudged(accepted=True, reason="the recipe is vegan and rated 4.6", by="ann")
    info = store.session(session_id)
    assert (info.status, info.cause) == ("succeeded", Cause.ANSWER_ACCEPTED.value), "the row: lists and the inbox"
    assert standing(info.status, info.cause) == "answer accepted"
    state = load_state(store, session_id)
    assert state.answer_verdict == stored and state.cause is Cause.ANSWER_ACCEPTED, "the log: a fold of it"
    events = load_events(store, session_id)
    session = trace(session_id, state, events)["session"]
    assert session["standing"] == "answer accepted" and session["answer_verdict"]["by"] == "ann"
    report = markdown_report(session_id, state, events)
    assert "**Status:** answer accepted" in report and "Accepted by ann: the recipe is vegan" in report

    judge_answer(store, session_id, accepted=False, reason="the rating is 3.9", by="bob")  # the latest word stands
    info = store.session(session_id)
    assert standing(info.status, info.cause) == "answer rejected"


def test_only_a_finished_run_with_an_answer_can_be_judged() -> None:
    store = SqlStore("sqlite://")
    paused = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    with pytest.raises(SessionInputError, match=r"has not finished \(paused\); accept or reject its answer once"):
        judge_answer(store, paused, accepted=True)
    assert len(load_events(store, paused)) == 1, "nothing appended"


def test_the_cli_records_a_verdict_and_refuses_an_unfinished_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    session_id = _finished(store)
    assert main(["judge", session_id, "reject", "--reason", "not vegan", "--operator", "cy", "--db", db]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line == {"session_id": session_id, "accepted": False, "reason": "not vegan", "by": "cy"}
    assert store.session(session_id).cause == Cause.ANSWER_REJECTED.value
    paused = create_session(store, BROWNIE_TASK, BROWNIE, start_url="dry://start", paused=True)
    assert main(["judge", paused, "accept", "--db", db]) == 2
