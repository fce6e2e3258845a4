"""A run succeeds only with an answer, and the task's own decomposition is not quietly replaced by one action."""

from __future__ import annotations

from conftest import SCRIPTS, answered, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Edit, apply_command
from planner.engine import Engine
from planner.events import Event, ModelCalled
from planner.models.offline import OfflineModel
from planner.models.scripted import Script, ScriptedModel
from planner.questions import Completion, FinalAnswer, Reply, View
from planner.state import RunStatus, SessionState
from planner.tree import Status

TASK = "find the cheapest tent"
SCRIPT = Script.model_validate(
    {
        "nodes": {
            TASK: {"type": "AND", "children": ["open the tents"]},
            "open the tents": {"type": "ACTION", "action": "click [1]"},
            "do the whole task at once": {"type": "ACTION", "action": "type [2] find the cheapest tent"},
        }
    }
)


class _NoAnswer(ScriptedModel):
    """Its plan works, but neither the completion check nor the final answer finds an answer."""

    def check_completion(self, view: View) -> Reply[Completion]:
        return Reply(Completion(complete=True, reason="all sub-goals succeeded"))

    def final_answer(self, view: View) -> Reply[FinalAnswer]:
        return Reply(FinalAnswer(answer=None, missing="no price was noted"))


def _run(state: SessionState, engine: Engine) -> list[Event]:
    log: list[Event] = []
    for _ in range(100):
        events = engine.step()
        if not events:
            break
        log.extend(events)
    assert state.finished, "the run did not finish in 100 steps"
    return log


def test_a_run_whose_plan_succeeded_but_that_has_no_answer_fails_and_says_what_is_missing() -> None:
    state, _ = new_state(TASK)
    _run(state, Engine(state, _NoAnswer(SCRIPT), DryEnvironment()))
    assert state.tree["0"].status is Status.SUCCESS
    assert state.status is RunStatus.FAILED
    assert state.reason == "no final answer: no price was noted"
    assert state.final_answer is None


def test_the_offline_model_has_no_answer_when_nothing_was_noted() -> None:
    tree = new_state(TASK)[0].tree
    view = View(task=TASK, tree=tree, node=tree["0"])
    answer = OfflineModel().final_answer(view).output
    assert (answer.answer, answer.missing) == (None, "nothing relevant was noted")


def test_re_expanding_the_task_into_one_action_is_refused_and_the_root_fails_visibly() -> None:
    state, _ = new_state(TASK)
    engine = Engine(state, ScriptedModel(SCRIPT), DryEnvironment())
    engine.step()  # the root is planned as sub-goals
    assert apply_command(state, Edit(node="0", description="do the whole task at once", reexpand=True))
    refused = [
        e.payload.error
        for e in _run(state, engine)
        if isinstance(e.payload, ModelCalled) and e.node_id == "0" and not e.payload.ok
    ]
    assert refused and set(refused) == {
        "the task was planned as sub-goals before; expanding it again must give sub-goals"
    }
    why = "expansion failed: the task was planned as sub-goals before; expanding it again must give sub-goals"
    assert (state.tree["0"].status, state.tree["0"].reason) == (Status.PRUNED, why)
    assert (state.status, state.reason) == (RunStatus.FAILED, why)
    assert engine.env.executed == []


def test_a_session_for_a_bundled_task_keeps_its_answer_check_whatever_model_runs_it() -> None:
    from demo.tasks import load_tasks
    from sessions.client.creation import create_session
    from sessions.store.reading import load_state
    from sessions.store.sql import SqlStore

    task = next(t for t in load_tasks() if t.id == "keyboard-brand-backpack")
    store = SqlStore("sqlite://")
    state = load_state(store, create_session(store, task.task, f"script:{SCRIPTS / 'brownie.json'}"))
    assert state.expect == task.criteria.must_contain
    assert state.answer_check is None  # not finished yet
    state.status, state.final_answer = RunStatus.SUCCEEDED, "The Acme Daypack 20L at $49.99"
    check = state.answer_check
    assert check is not None and not check.passed
    assert check.missing == ["Northwind", "Northwind Metro 18L", "54.99"]
    other = load_state(store, create_session(store, "a task of my own", "demo"))
    assert other.expect == [] and other.answer_check is None


def test_the_report_shows_the_answer_check_beside_the_answer() -> None:
    from sessions.client.export import markdown_report

    state = SessionState(task=TASK, expect=["Northwind", "54.99"])
    state.status, state.final_answer = RunStatus.SUCCEEDED, "Northwind Metro at $49.99"
    assert "**Answer check: not met** — missing: 54.99" in markdown_report("s", state, [])
    state.final_answer = "Northwind Metro at $54.99"
    assert "**Answer check: met.**" in markdown_report("s", state, [])


def test_a_run_that_succeeded_with_an_answer_its_check_fails_is_listed_as_needing_the_operator() -> None:
    """Issue 12, defect 4: such a run showed as a plain success in All sessions and nowhere in the inbox."""
    from planner.events import Cause
    from sessions.client.attention import Need, needing_attention
    from sessions.store.sql import SqlStore

    store = SqlStore("sqlite://")
    answered(store, "The Acme Daypack 20L at $49.99")
    [info] = store.sessions()
    lacks = "the answer check is not met: it lacks Northwind, Northwind Metro 18L, 54.99"
    assert (info.status, info.cause, info.reason) == ("succeeded", Cause.ANSWER_MISSED, lacks)
    [item] = needing_attention([info])
    assert (item.need, item.why) == (Need.ANSWER, f"succeeded, but {lacks}")

    right, _ = answered(store, "The Northwind Metro 18L at $54.99")
    info = store.session(right)
    assert (info.status, info.cause, info.reason) == ("succeeded", Cause.ANSWER_CHECKED, None)
    assert needing_attention([info]) == []
