"""Counterfactual re-ask: a recorded expansion, repair or observation call asked again with an
instruction, another model or other settings; the answers compared as plans; the new one adopted
as an ordinary operator edit that says where it came from, and taken back by Undo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from cli_helpers import cli, last_json
from conftest import BROWNIE_TASK, MECHANICS, SCRIPTS
from fake_anthropic import FakeAnthropic

from planner.browser.dry import DRY_START
from planner.config import Breakpoint
from planner.events import CommandApplied, Kind, ModelCalled
from planner.models.prompts import OPERATOR_INSTRUCTION
from planner.questions import Question
from planner.state import RunStatus
from planner.tree import Status
from sessions.client.commands import queue_command
from sessions.client.counterfactual import Counterfactual, ReaskError, adopt, reask
from sessions.client.creation import create_session
from sessions.store.reading import load_state
from sessions.store.sql import SqlStore
from sessions.worker.runner import Runner

pytestmark = pytest.mark.backends("disk")

REVIEW = MECHANICS.model_copy(update={"review_first_plan": True})
SEARCH, SELECT, NOTE = "Search for vegan chocolate brownie", "Select a recipe rated 4+", "Note the recipe"
INSTRUCTION = "check that the recipe is vegan before noting it"
NEW_PLAN = [SELECT, "Note the recipe name and its rating", "Check that the recipe is vegan"]
"""The root's plan under INSTRUCTION: the search removed, the selection the same, the note reworded, a check added."""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """The brownie script, with what it answers under INSTRUCTION."""
    data = json.loads((SCRIPTS / "brownie.json").read_text())
    data["instructions"] = {INSTRUCTION: {"nodes": {BROWNIE_TASK: {"type": "AND", "children": NEW_PLAN}}}}
    path = tmp_path / "brownie.json"
    path.write_text(json.dumps(data))
    return path


def _run(store: SqlStore, session_id: str) -> None:
    """Run the session until it stops running (its commands applied first), then leave it as it is."""
    Runner(store, session_id).run(on_idle=lambda state: False)


def _reviewing(store: SqlStore, task: str, model: str) -> str:
    """A session started paused, run to the review of its first plan."""
    session_id = create_session(store, task, model, start_url=DRY_START, config=REVIEW)
    _run(store, session_id)
    state = load_state(store, session_id)
    assert (state.status, state.reason) == (RunStatus.PAUSED, "plan review: 0 expanded as AND"), state.reason
    return session_id


def _call(store: SqlStore, session_id: str, question: Question, node: str = "0") -> int:
    """The event number of the first accepted call of `question` at `node`."""
    return next(
        e.seq
        for e in store.load(session_id)
        if isinstance(e.payload, ModelCalled) and e.payload.question is question and e.node_id == node and e.payload.ok
    )


def _marks(cf: Counterfactual) -> list[tuple[str, str | None, str | None]]:
    return [
        (m.mark, m.before.description if m.before else None, m.after.description if m.after else None)
        for m in cf.children
    ]


def _children(store: SqlStore, session_id: str, node: str = "0") -> list[tuple[str, str]]:
    state = load_state(store, session_id)
    return [(c.description, c.status.value) for c in state.tree.children(state.tree[node])]


def test_an_expansion_reasked_with_an_instruction_gives_another_plan_marked_child_by_child(
    store: SqlStore, script: Path
) -> None:
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")
    call = _call(store, session_id, Question.EXPAND)
    last = store.session(session_id).last_seq
    cf = reask(store, session_id, call, instruction=INSTRUCTION)
    assert store.session(session_id).last_seq == last, "a re-ask never writes to the session's log"
    assert cf.before is not None and [c.description for c in cf.before.children] == [SEARCH, SELECT, NOTE]
    assert cf.after is not None and [c.description for c in cf.after.children] == NEW_PLAN
    assert _marks(cf) == [
        ("removed", SEARCH, None),
        ("same", SELECT, SELECT),
        ("changed", NOTE, NEW_PLAN[1]),
        ("added", None, NEW_PLAN[2]),
    ]
    plain = reask(store, session_id, call)
    assert {m.mark for m in plain.children} == {"same"} and plain.fields == [], "no edit, no difference"
    assert store.session(session_id).last_seq == last, "a re-ask never writes to the session's log"


def test_adopting_applies_one_plan_command_with_its_provenance_and_undo_takes_it_back(
    store: SqlStore, script: Path
) -> None:
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")
    before = _children(store, session_id)
    cf = reask(store, session_id, _call(store, session_id, Question.EXPAND), instruction=INSTRUCTION)
    [command_id] = adopt(store, cf)
    _run(store, session_id)
    applied = [e for e in store.load(session_id) if isinstance(e.payload, CommandApplied)]
    assert [a.payload.command_id for a in applied] == [command_id], "the adoption applied as one command"
    command = cast(CommandApplied, applied[0].payload).command
    assert command["kind"] == "plan" and command["provenance"] == f"counterfactual of call #{cf.call}"
    assert _children(store, session_id) == [
        (SEARCH, "PRUNED"),
        (SELECT, "UNVISITED"),
        (NEW_PLAN[1], "UNVISITED"),
        (NEW_PLAN[2], "UNVISITED"),
    ]
    queue_command(store, session_id, {"kind": "undo"})
    _run(store, session_id)
    after_undo = _children(store, session_id)
    assert after_undo[:3] == before and after_undo[3] == (NEW_PLAN[2], "DELETED"), "undo restores the plan"


def test_another_model_and_other_settings(store: SqlStore, script: Path, tmp_path: Path) -> None:
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")
    call = _call(store, session_id, Question.EXPAND)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"nodes": {BROWNIE_TASK: {"type": "AND", "children": [SEARCH, NOTE]}}}))
    cf = reask(store, session_id, call, model=f"script:{other}")
    assert cf.model == f"script:{other}" and _marks(cf) == [
        ("same", SEARCH, SEARCH),
        ("removed", SELECT, None),
        ("same", NOTE, NOTE),
    ]
    with pytest.raises(ReaskError, match="at most 2 are allowed"):
        reask(store, session_id, call, settings={"max_children": 2, "expansion_retries": 0})
    with pytest.raises(ReaskError, match="those settings cannot be used: max_children"):
        reask(store, session_id, call, settings={"max_children": 0})


def test_the_demo_model_takes_an_instruction_as_its_plain_verb_steps(store: SqlStore) -> None:
    task = (
        "Find the brand of the highest-rated keyboard, then tell me the price of the cheapest backpack "
        "from that same brand."
    )
    session_id = _reviewing(store, task, "demo")
    call = _call(store, session_id, Question.EXPAND)
    steps = ["open the Keyboards category", "sort by rating", "note the brand of the top keyboard"]
    cf = reask(store, session_id, call, instruction=", then ".join(steps))
    assert [m.mark for m in cf.children] == ["removed"] * 3 + ["added"] * 3
    assert cf.after is not None and [c.description for c in cf.after.children] == steps
    assert len(adopt(store, cf)) == 1, "one plan command"
    _run(store, session_id)
    assert _children(store, session_id)[3:] == [(step, "UNVISITED") for step in steps]
    assert [s for _, s in _children(store, session_id)[:3]] == ["PRUNED"] * 3


def test_an_observation_reask_shows_the_fields_that_changed(store: SqlStore, script: Path) -> None:
    session_id = create_session(store, BROWNIE_TASK, f"script:{script}", start_url=DRY_START, config=MECHANICS)
    _run(store, session_id)
    call = _call(store, session_id, Question.OBSERVE, node="0.1")
    cf = reask(store, session_id, call, model="demo", instruction="open the recipe with the best rating")
    changed = {change.field: change.after for change in cf.fields}
    assert changed["feedback"] == "open the recipe with the best rating", cf.fields
    assert cf.before is None and cf.children == []


RECIPE_C, NOTE_C = "Open recipe C from the second results page", "Note recipe C"
RATED_C, VEGAN_C = "Note recipe C with its rating", "Check that recipe C is vegan"
LOOK_CLOSER = "note recipe C with its rating and check that it is vegan"


@pytest.fixture
def failing_script(tmp_path: Path) -> Path:
    """The brownie script whose two recipes fail and whose root repair adds recipe C; under LOOK_CLOSER the
    repair rewords the note and adds a check (both scripted, so the adopted plan runs)."""
    data = json.loads((SCRIPTS / "brownie_fail.json").read_text())
    data["nodes"][RATED_C] = {"type": "ACTION", "action": "note [Vegan cocoa brownies, 4.6 stars]"}
    data["nodes"][VEGAN_C] = {"type": "ACTION", "action": "note [Vegan cocoa brownies is vegan]"}
    data["instructions"] = {LOOK_CLOSER: {"repairs": {BROWNIE_TASK: {"add": [RECIPE_C, RATED_C, VEGAN_C]}}}}
    path = tmp_path / "brownie_fail.json"
    path.write_text(json.dumps(data))
    return path


def _paused_after_the_root_repair(store: SqlStore, script: Path) -> str:
    """A session run to the breakpoint after its root's repair (the OR node's own recovery pauses first)."""
    config = MECHANICS.model_copy(update={"breakpoints": frozenset({Breakpoint.ON_REPAIR})})
    session_id = create_session(store, BROWNIE_TASK, f"script:{script}", start_url=DRY_START, config=config)
    _run(store, session_id)
    assert load_state(store, session_id).reason == "breakpoint: 0.2 repaired"
    queue_command(store, session_id, {"kind": "resume"})
    _run(store, session_id)
    state = load_state(store, session_id)
    assert (state.status, state.reason) == (RunStatus.PAUSED, "breakpoint: 0 repaired"), state.reason
    return session_id


def test_a_repair_reasked_with_an_instruction_is_compared_as_plans_and_adopted(
    store: SqlStore, failing_script: Path
) -> None:
    session_id = _paused_after_the_root_repair(store, failing_script)
    call = _call(store, session_id, Question.REPAIR)
    last = store.session(session_id).last_seq
    cf = reask(store, session_id, call, instruction=LOOK_CLOSER)
    assert store.session(session_id).last_seq == last, "a re-ask never writes to the session's log"
    assert cf.question is Question.REPAIR and cf.node == "0"
    assert cf.before is not None and [(c.id, c.description) for c in cf.before.children] == [
        ("0.1", SEARCH),
        ("0.4", RECIPE_C),
        ("0.5", NOTE_C),
    ], "the recorded repair: the search that ran is kept, the failed selection is gone, recipe C added"
    assert cf.after is not None and [(c.id, c.description) for c in cf.after.children] == [
        ("0.1", SEARCH),
        (None, RECIPE_C),
        (None, RATED_C),
        (None, VEGAN_C),
    ]
    assert _marks(cf) == [
        ("same", SEARCH, SEARCH),
        ("same", RECIPE_C, RECIPE_C),
        ("changed", NOTE_C, RATED_C),
        ("added", None, VEGAN_C),
    ]
    [command_id] = adopt(store, cf)
    queue_command(store, session_id, {"kind": "resume"})
    _run(store, session_id)
    applied = next(
        e.payload
        for e in store.load(session_id)
        if isinstance(e.payload, CommandApplied) and e.payload.command_id == command_id
    )
    assert applied.command["kind"] == "plan"
    assert applied.command["provenance"] == f"counterfactual of call #{call}"
    state = load_state(store, session_id)
    assert state.status is RunStatus.SUCCEEDED, state.reason
    assert _children(store, session_id)[3:] == [(RECIPE_C, "SUCCESS"), (RATED_C, "SUCCESS"), (VEGAN_C, "SUCCESS")]
    assert state.final_answer is not None and "is vegan" in state.final_answer


def test_a_repair_the_settings_would_not_make_is_refused(store: SqlStore, failing_script: Path) -> None:
    session_id = _paused_after_the_root_repair(store, failing_script)
    call = _call(store, session_id, Question.REPAIR)
    with pytest.raises(ReaskError, match=r"with repair off, 0 \(repaired 0 times\) would not be repaired at all"):
        reask(store, session_id, call, settings={"repair": False})
    with pytest.raises(ReaskError, match="limited to 0 revisions"):
        reask(store, session_id, call, settings={"max_revisions": 0})


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (999, r"session \w+ has no event 999 \(it has \d+\); its expansion, repair and observation calls are #"),
        (1, r"event 1 of session \w+ is a session_created, not a model call; its expansion"),
    ],
)
def test_a_call_that_cannot_be_reasked_gets_one_sentence(store: SqlStore, script: Path, call: int, says: str) -> None:
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")
    with pytest.raises(ReaskError, match=says) as refused:
        reask(store, session_id, call)
    assert "\n" not in str(refused.value)


def test_a_completion_call_and_a_finished_sessions_adoption_are_refused(store: SqlStore, script: Path) -> None:
    session_id = create_session(store, BROWNIE_TASK, f"script:{script}", start_url=DRY_START, config=MECHANICS)
    _run(store, session_id)
    assert load_state(store, session_id).status is RunStatus.SUCCEEDED
    check = _call(store, session_id, Question.COMPLETE)
    with pytest.raises(ReaskError, match=f"call #{check} asked for complete, which changes no plan"):
        reask(store, session_id, check)
    cf = reask(store, session_id, _call(store, session_id, Question.EXPAND), instruction=INSTRUCTION)
    with pytest.raises(ReaskError, match=r"has ended \(succeeded\); fork it"):
        adopt(store, cf)
    with pytest.raises(Exception, match="has no answers for the instruction 'be quick'"):
        reask(store, session_id, cf.call, instruction="be quick")


def test_the_cli_prints_both_answers_and_the_diff_and_adopts_signed_by_the_operator(
    store: SqlStore, script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--adopt` signs its commands as `command` does: `--operator`, else $ANDOR_OPERATOR (else the user name)."""
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")
    call = _call(store, session_id, Question.EXPAND)
    db = store.url
    monkeypatch.setenv("ANDOR_OPERATOR", "dana")
    adopting = ("--db", db, "reask", session_id, "--call", str(call), "--instruction", INSTRUCTION, "--adopt")
    result = cli(*adopting)
    assert result.returncode == 0, result.stderr
    printed = last_json(result)
    assert printed["original"]["children"][0]["description"] == SEARCH
    assert [c["description"] for c in printed["new"]["children"]] == NEW_PLAN
    assert [m["mark"] for m in printed["children"]] == ["removed", "same", "changed", "added"]
    assert len(printed["adopted"]) == 1
    named = cli(*adopting, "--operator", "erin")
    assert named.returncode == 0, named.stderr
    queued = {c.command_id: c.payload for c in store.pending(session_id)}
    signed = [queued[command_id]["by"] for command_id in [*printed["adopted"], *last_json(named)["adopted"]]]
    assert signed == ["dana", "erin"], "each adopted command says who adopted it"
    refused = cli("--db", db, "reask", session_id, "--call", "1", check=False)
    assert refused.returncode == 2 and refused.stderr.startswith("error: event 1 of session"), refused.stderr


def test_claude_reasked_with_an_instruction_through_the_messages_api(
    store: SqlStore, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = _reviewing(store, BROWNIE_TASK, f"script:{script}")

    def expansion(body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][0]["content"][1]["text"]
        children = NEW_PLAN if OPERATOR_INSTRUCTION in prompt and INSTRUCTION in prompt else [SEARCH]
        return {"type": "AND", "children": [{"description": text} for text in children], "reasoning": "asked"}

    with FakeAnthropic({("expand_node", BROWNIE_TASK): expansion}) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-counterfactual")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        cf = reask(
            store, session_id, _call(store, session_id, Question.EXPAND), model="claude", instruction=INSTRUCTION
        )
        assert len(fake.requests) == 1, "one Messages API call"
    assert cf.model == "claude" and cf.after is not None
    assert [c.description for c in cf.after.children] == NEW_PLAN
    assert cf.usage["input_tokens"] > 0 and "counterfactual" not in json.dumps(cf.usage)
    assert [m.mark for m in cf.children] == ["removed", "same", "changed", "added"]
    assert not any(e.kind is Kind.COMMAND_APPLIED for e in store.load(session_id))
    assert len(adopt(store, cf)) == 1, "one plan command"
    _run(store, session_id)
    assert [c for c, s in _children(store, session_id) if s == "UNVISITED"] == NEW_PLAN
    assert load_state(store, session_id).tree["0.1"].status is Status.PRUNED
