"""The paper's tree metrics, each checked against values worked out by hand on small trees.

Hand-built sessions are recorded through `Recorder`, so their events and state are exactly what a
real session would hold; the brownie failure variant runs through the engine itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import BROWNIE_TASK, answered, load, run_script

from planner.config import EngineConfig
from planner.events import Event, Kind
from planner.metrics import SUITE_ROWS, SessionMetrics, SuiteMetrics, session_metrics, suite_metrics, tree_graph
from planner.state import Recorder, SessionState, replay
from sessions.client.verdict import judge_answer
from sessions.store import EventStore
from sessions.store.reading import load_events
from sessions.store.sql import SqlStore


class Hand:
    """A session written event by event."""

    def __init__(self, task: str = "find a kettle") -> None:
        self.state = SessionState()
        self.rec = Recorder(self.state, clock=lambda: 0.0)
        self.rec.record(Kind.SESSION_CREATED, task=task, model="hand")

    def __call__(self, kind: Kind, node: str | None = None, **fields: Any) -> None:
        self.rec.record(kind, node, **fields)

    def expand(self, node: str, type_: str, *children: str, action: str | None = None) -> None:
        specs = [{"id": f"{node}.{i}", "description": text} for i, text in enumerate(children, 1)]
        self(Kind.NODE_EXPANDED, node, type=type_, children=specs, action=action)

    def status(self, node: str, status: str, **fields: Any) -> None:
        self(Kind.STATUS_CHANGED, node, status=status, **fields)

    def act(self, node: str, ok: bool = True) -> None:
        self(Kind.ACTION_EXECUTED, node, action="click [1]", ok=ok, error=None if ok else "no such element")

    def metrics(self, **given: Any) -> SessionMetrics:
        return session_metrics(self.state, self.rec.events, **given)

    @property
    def events(self) -> list[Event]:
        return self.rec.events


def test_brownie_failure_variant_has_the_papers_figures() -> None:
    """OR exhausted, later sibling DELETED, root repaired (tests/test_worked_example.py checks the run itself).

    Final tree: 0 AND, 0.1 ACTION, 0.2 OR (PRUNED) with 0.2.1 and 0.2.2 (PRUNED), 0.3 (DELETED,
    never expanded), 0.4 and 0.5 (repair-made actions). Hand count:
    - neither pruned nor deleted: 0, 0.1, 0.4, 0.5 -> 4 of 8 = 0.5
    - repair attempts: 0.2 (nothing to add, so it cannot recover) and 0 (adds 0.4, 0.5; 0 then
      succeeds) -> 1 of 2 recovers
    - failures that would invoke repair: 0.2 after its last alternative, 0 after 0.2 -> 2 (0.2's
      first failure moved on to 0.2.2, so it is not one)
    - originally planned: 0.1, 0.2, 0.2.1, 0.2.2, 0.3; 0.3 deleted -> 4 of 5
    - expansions 0, 0.1, 0.2, 0.2.1, 0.2.2, 0.4, 0.5 = 7; one repair that changed the tree; prunings
      0.2.1, 0.2.2, 0.2 and the deletion of 0.3 = 4 -> 12 revisions over all 8 nodes
    """
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK)
    m = session_metrics(state, log)

    assert (m.total_nodes, m.and_nodes, m.or_nodes, m.action_nodes) == (8, 1, 1, 5)
    assert (m.pruned_nodes, m.deleted_nodes, m.tree_efficiency) == (3, 1, 0.5)
    assert (m.repair_attempts, m.recovered, m.recovery_rate, m.repair_triggers) == (2, 1, 0.5, 2)
    assert (m.originally_planned, m.plan_preservation) == (5, 0.8)
    assert (m.expansions, m.repairs, m.prunings, m.total_revisions, m.nodes_revised) == (7, 1, 4, 12, 8)
    assert (m.max_depth, m.browser_steps, m.success) == (2, 5, True)
    assert (m.operator_edits, m.operator_nodes, m.operator_successes) == (0, 0, 0)
    assert m.constraint_satisfaction is None  # the dry run has no constraints


def test_without_repair_the_same_failures_still_count_as_triggers_but_nothing_recovers() -> None:
    """The paper's convention: trigger counts failures that would invoke repair; recovery is 0 without attempts.

    Without repair 0.2 and then 0 are pruned; 0.3 deleted. Nodes 0, 0.1, 0.2, 0.2.1, 0.2.2, 0.3:
    pruned 0, 0.2, 0.2.1, 0.2.2, deleted 0.3 -> efficiency 1 of 6.
    """
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK, EngineConfig(repair=False))
    m = session_metrics(state, log)

    assert (m.repair_triggers, m.repair_attempts, m.recovery_rate) == (2, 0, None)
    assert (m.total_nodes, m.pruned_nodes, m.deleted_nodes) == (6, 4, 1)
    assert m.tree_efficiency == pytest.approx(1 / 6)
    assert m.success is False
    assert suite_metrics([m]).recovery_rate == 0.0


def test_a_repair_that_prunes_a_planned_child_costs_plan_preservation() -> None:
    """0 AND [0.1, 0.2, 0.3]; 0.1 succeeds, 0.2 fails; the repair prunes 0.3 and adds 0.4, which succeeds.

    Originally planned 0.1, 0.2, 0.3: 0.2 was pruned by its failure (kept), 0.3 by the repair (lost)
    -> 2 of 3. The failed action 0.2 is not a trigger (an action is not repaired); 0 is.
    """
    h = Hand()
    h.expand("0", "AND", "open the shop", "search kettles", "sort by price")
    h.expand("0.1", "ACTION", action="click [1]")
    h.act("0.1")
    h.expand("0.2", "ACTION", action="click [1]")
    h.act("0.2", ok=False)
    h.status("0.2", "PRUNED", subtree=True)
    h.status("0", "FAIL", reason="0.2 failed")
    h(Kind.MODEL_CALL, "0", question="repair")
    h.status("0.3", "PRUNED", reason="pruned by repair", subtree=True)
    h(Kind.NODES_ADDED, "0", nodes=[{"id": "0.4", "description": "search for kettle"}], origin="repair")
    h(Kind.REVISION_USED, "0", ok=True)
    h.status("0", "VISITED")
    h.expand("0.4", "ACTION", action="click [1]")
    h.act("0.4")
    h.status("0", "SUCCESS")
    m = h.metrics()

    assert (m.originally_planned, m.plan_preservation) == (3, pytest.approx(2 / 3))
    assert (m.repair_triggers, m.repair_attempts, m.recovered) == (1, 1, 1)
    assert (m.pruned_nodes, m.tree_efficiency) == (2, 0.6)  # 0, 0.1, 0.4 of 5
    assert (m.expansions, m.repairs, m.prunings) == (4, 1, 2)
    assert m.nodes_revised == 5  # 0, 0.1, 0.2, 0.3, 0.4


def test_a_repair_whose_node_fails_again_does_not_recover() -> None:
    h = Hand()
    h.expand("0", "AND", "search kettles")
    h.status("0.1", "PRUNED", subtree=True)
    h.status("0", "FAIL")
    h(Kind.MODEL_CALL, "0", question="repair")
    h(Kind.NODES_ADDED, "0", nodes=[{"id": "0.2", "description": "browse kettles"}], origin="repair")
    h(Kind.REVISION_USED, "0", ok=True)
    h.status("0", "VISITED")
    h.status("0.2", "PRUNED", subtree=True)
    h.status("0", "FAIL")
    h(Kind.REVISION_USED, "0", ok=False, reason="revision budget spent")
    h.status("0", "PRUNED", subtree=True)
    m = h.metrics()

    assert (m.repair_attempts, m.recovered, m.recovery_rate, m.repair_triggers) == (2, 0, 0.0, 2)
    assert m.originally_planned == 1  # 0.2 was made by the repair


def test_operator_share_counts_edits_nodes_and_the_successes_below_them() -> None:
    """0 AND [0.1]; the operator injects 0.2 (an AND) whose planner-made child 0.2.1 succeeds, edits 0.1,
    and pauses (not a plan edit). Successes under an operator edit: 0.1 (edited), 0.2, 0.2.1 -> 3."""
    h = Hand()
    h.expand("0", "AND", "search kettles")
    h(Kind.COMMAND_APPLIED, command_id="c1", command={"kind": "pause"})
    h(Kind.COMMAND_APPLIED, command_id="c2", command={"kind": "inject", "parent": "0", "goals": ["check stock"]})
    h(Kind.NODES_ADDED, "0", nodes=[{"id": "0.2", "description": "check stock"}], origin="operator")
    h(Kind.COMMAND_APPLIED, command_id="c3", command={"kind": "edit", "node": "0.1"})
    h(Kind.NODE_REWRITTEN, "0.1", description="search electric kettles", by="operator")
    h.expand("0.1", "ACTION", action="click [1]")
    h.act("0.1")
    h.expand("0.2", "AND", "open stock page")
    h.expand("0.2.1", "ACTION", action="click [1]")
    h.act("0.2.1")
    h.status("0.2", "SUCCESS")
    h.status("0", "SUCCESS")
    m = h.metrics()

    assert (m.operator_edits, m.operator_nodes, m.operator_successes) == (2, 1, 3)
    assert m.originally_planned == 1  # 0.1 only: 0.2 is the operator's, 0.2.1 sits below it
    assert m.max_depth == 2


def test_constraint_satisfaction_from_the_task_check_or_the_candidates_the_answer_names() -> None:
    h = Hand()
    h(Kind.CONSTRAINTS_SET, constraints=["under $50", "1.7 l", "stainless steel"])
    h(
        Kind.OBSERVED,
        "0",
        candidates=[
            {"name": "Aqua Kettle", "verdict": "uncertain", "unmet": ["stainless steel"]},
            {"name": "Brew Kettle", "verdict": "qualifies"},
            {"name": "Cheap Kettle", "verdict": "rejected", "unmet": ["1.7 l", "stainless steel"]},
        ],
    )
    assert h.metrics().constraint_satisfaction == 0.0  # no answer yet: it meets nothing
    assert h.metrics(constraints_met=(1, 4)).constraint_satisfaction == 0.25
    h.status("0", "SUCCESS", answer="The aqua kettle and the Brew Kettle")
    assert h.metrics().constraint_satisfaction == pytest.approx((2 / 3 + 1) / 2)
    h.status("0", "VISITED")
    h.status("0", "SUCCESS", answer="a kettle nobody reported")
    assert h.metrics().constraint_satisfaction is None


def _stored_metrics(store: EventStore, session_id: str) -> SessionMetrics:
    events = load_events(store, session_id)
    return session_metrics(replay(events), events)


def test_the_answer_check_and_the_operators_verdict_on_the_answer() -> None:
    """Two finished runs of a task with an answer check, one answer right and one wrong: the check says
    which met it; the operator's word (the latest one) is there beside it, whichever way it goes."""
    store = SqlStore("sqlite://")
    right, _ = answered(store, "The Northwind Metro 18L at $54.99")
    wrong, _ = answered(store, "The Acme Daypack 20L at $49.99")
    before = _stored_metrics(store, right), _stored_metrics(store, wrong)
    assert [(m.answer_check, m.answer_verdict, m.success) for m in before] == [
        ("met", None, True),
        ("not met", None, False),
    ], "a run whose answer failed its check is no success"

    judge_answer(store, right, accepted=False, reason="misread the brand", by="ana")
    judge_answer(store, right, accepted=True, by="ana")  # the latest word stands
    judge_answer(store, wrong, accepted=False, reason="not the brand asked for", by="ana")
    after = _stored_metrics(store, right), _stored_metrics(store, wrong)
    assert [(m.answer_check, m.answer_verdict) for m in after] == [("met", "accepted"), ("not met", "rejected")]
    assert [m.success for m in after] == [True, False], "the operator's word decides, whatever the check said"
    judge_answer(store, wrong, accepted=True, reason="the brand was renamed", by="ana")
    assert _stored_metrics(store, wrong).success is True, "an accepted answer is a success though its check failed"


def test_a_run_without_an_answer_check_or_a_verdict_has_neither() -> None:
    state, log, _ = run_script(load("brownie.json"), BROWNIE_TASK)
    m = session_metrics(state, log)
    assert state.final_answer and (m.answer_check, m.answer_verdict) == (None, None)


def test_suite_aggregate_means_counts_and_pools_recovery() -> None:
    """Two sessions: the brownie variant with repair (1 of 2 attempts recovers) and a hand-made one
    with one attempt that recovers: pooled recovery 2 of 3, not the mean of 0.5 and 1."""
    state, log, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK)
    first = session_metrics(state, log)
    second = first.model_copy(
        update={"success": False, "repair_attempts": 1, "recovered": 1, "repair_triggers": 0, "total_nodes": 4}
    )
    suite = suite_metrics([first, second])

    assert suite.sessions == 2
    assert suite.success_rate == 0.5
    assert suite.recovery_rate == pytest.approx(2 / 3)
    assert suite.repair_trigger_rate == 0.5
    assert suite.total_nodes == 6
    assert suite.plan_preservation == 0.8
    assert suite.constraint_satisfaction is None
    assert suite_metrics([]).sessions == 0


def test_suite_rows_name_only_suite_metrics() -> None:
    fields = [row.field for row in SUITE_ROWS if row.field]
    assert set(fields) <= set(SuiteMetrics.model_fields)
    assert len(fields) == len(set(fields))


def test_the_graph_is_the_tree() -> None:
    state, _, _ = run_script(load("brownie_fail.json"), BROWNIE_TASK)
    graph = tree_graph(state.tree)
    assert sorted(graph.successors("0")) == ["0.1", "0.2", "0.3", "0.4", "0.5"]
    assert graph.number_of_edges() == len(state.tree) - 1
