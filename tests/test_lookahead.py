"""Lookahead: actions planned while a page is read are used only while that page is still current."""

from __future__ import annotations

from conftest import drive, new_state

from planner.browser.dry import DryEnvironment
from planner.commands import Edit, apply_command
from planner.config import EngineConfig
from planner.engine import Engine
from planner.events import Event, Kind
from planner.models.scripted import Script, ScriptedModel
from planner.questions import Observation, Proposal, Reply, View
from planner.state import RunStatus, SessionState, replay
from planner.tree import NodeType

TASK = "three clicks"
SCRIPT = Script.model_validate(
    {
        "nodes": {
            TASK: {"type": "AND", "children": ["first", "second", "third"]},
            "first": {"type": "ACTION", "action": "click [1]"},
            "second": {"type": "ACTION", "action": "click [2]"},
            "third": {"type": "ACTION", "action": "click [3]"},
        }
    }
)


class Planner(ScriptedModel):
    """The scripted model, but its observations plan ahead whatever the test says."""

    def __init__(self, ahead: dict[str, list[Proposal]] | None = None, **kwargs: object) -> None:
        super().__init__(SCRIPT, **kwargs)  # type: ignore[arg-type]
        self.ahead = ahead or {}

    def observe(self, view: View, action: str) -> Reply[Observation]:
        return Reply(Observation(summary=f"after {action}", ahead=self.ahead.get(action, [])))


class Picky(DryEnvironment):
    """A dry environment on which some actions no longer fit the page."""

    def __init__(self, missing: set[str]) -> None:
        super().__init__()
        self.missing = missing

    def check(self, action: str) -> str | None:
        return f"no element for {action}" if action in self.missing else super().check(action)


def _run(
    model: ScriptedModel,
    env: DryEnvironment | None = None,
    config: EngineConfig | None = None,
    state: SessionState | None = None,
    log: list[Event] | None = None,
) -> tuple[SessionState, list[Event]]:
    if state is None or log is None:
        state, log = new_state(TASK, config)
    drive(Engine(state, model, env or DryEnvironment()), log)
    return state, log


def _expansions(log: list[Event]) -> list[str]:
    return [
        e.node_id or "" for e in log if e.kind is Kind.MODEL_CALL and e.payload.question == "expand" and e.payload.ok
    ]


def test_a_planned_action_replaces_the_expansion_call() -> None:
    model = Planner({"click [1]": [Proposal(node="0.2", action="click [2]")]})
    state, log = _run(model)
    assert _expansions(log) == ["0", "0.1", "0.3"]
    assert state.tree["0.2"].action == "click [2]" and state.status is RunStatus.SUCCEEDED


def test_a_page_change_discards_actions_planned_for_the_old_page() -> None:
    both = [Proposal(node="0.2", action="click [2]"), Proposal(node="0.3", action="click [9]")]
    state, log = _run(Planner({"click [1]": both}))
    assert _expansions(log) == ["0", "0.1", "0.3"]
    assert state.tree["0.3"].action == "click [3]", "0.3's plan was made for the page before click [2]"


def test_a_planned_action_that_no_longer_fits_is_expanded_with_the_reason() -> None:
    state, log = new_state(TASK, EngineConfig(constraints=False))
    model, env = Planner({"click [1]": [Proposal(node="0.2", action="click [7]")]}), Picky(set())
    engine = Engine(state, model, env)
    while "0.2" not in state.proposals:
        log.extend(engine.step())
    env.missing.add("click [7]")  # say the page re-rendered under the planner
    _run(model, env, state=state, log=log)
    assert "0.2" in _expansions(log)
    expanded = next(e for e in log if e.kind is Kind.NODE_EXPANDED and e.node_id == "0.2")
    assert (
        expanded.payload.note
        == "the action planned ahead (click [7]) no longer fits the page: no element for click [7]"
    )
    assert state.tree["0.2"].action == "click [2]"


def test_planning_a_node_that_is_not_upcoming_is_retried_then_skipped() -> None:
    state, log = _run(Planner({"click [1]": [Proposal(node="0", action="click [3]")]}))
    refused = [e for e in log if e.kind is Kind.MODEL_CALL and e.payload.question == "observe" and not e.payload.ok]
    assert [e.payload.error for e in refused] == [
        "ahead names 0, which is not an upcoming sub-goal (upcoming: 0.2, 0.3)"
    ] * 3
    skipped = next(e for e in log if e.kind is Kind.UPDATE_REFUSED)
    assert skipped.node_id == "0.1" and "not an upcoming sub-goal" in skipped.payload.reason
    assert "0.2" in _expansions(log) and state.status is RunStatus.SUCCEEDED


def test_an_operator_rewrite_drops_the_plan_made_for_the_old_wording() -> None:
    state, log = new_state(TASK, EngineConfig(constraints=False))
    model = Planner({"click [1]": [Proposal(node="0.2", action="click [2]")]})
    engine = Engine(state, model, DryEnvironment())
    while "0.2" not in state.proposals:
        log.extend(engine.step())
    log.extend(apply_command(state, Edit(node="0.2", description="third")))
    assert "0.2" not in state.proposals
    _run(model, state=state, log=log)
    assert state.tree["0.2"].action == "click [3]" and "0.2" in _expansions(log)


def test_an_expansion_grounds_its_first_children_and_lookahead_zero_ignores_that() -> None:
    class Grounding(Planner):
        def expand(self, view: View):  # type: ignore[no-untyped-def]
            reply = super().expand(view)
            if view.node.description == TASK:
                children = [
                    c.model_copy(update={"action": f"click [{i}]"}) for i, c in enumerate(reply.output.children, 1)
                ]
                reply = Reply(reply.output.model_copy(update={"children": children}))
            return reply

    state, log = _run(Grounding())
    assert _expansions(log) == ["0", "0.2", "0.3"], "only 0.1 is planned: the later ones follow a page change"
    assert state.tree["0.1"].type is NodeType.ACTION and state.status is RunStatus.SUCCEEDED

    _, off = _run(Grounding(), config=EngineConfig(constraints=False, lookahead=0))
    assert _expansions(off) == ["0", "0.1", "0.2", "0.3"]
    assert next(e for e in off if e.kind is Kind.NODE_EXPANDED).payload.children[0].action is None


def test_planned_actions_are_rebuilt_from_the_log() -> None:
    state, log = new_state(TASK, EngineConfig(constraints=False))
    engine = Engine(state, Planner({"click [1]": [Proposal(node="0.2", action="click [2]")]}), DryEnvironment())
    while "0.2" not in state.proposals:
        log.extend(engine.step())
    assert replay(log).proposals == state.proposals == {"0.2": "click [2]"}


def test_planning_ahead_goes_past_notes_and_stops_after_a_page_change_or_a_gap() -> None:
    from planner.actions import leading_actions

    ground = {"note it": "note [x]", "open it": "click [1]", "open more": "click [2]"}.get
    assert leading_actions(["note it", "open it", "open more"], ground) == [
        ("note it", "note [x]"),
        ("open it", "click [1]"),
    ]
    assert leading_actions(["think hard", "note it"], ground) == []
