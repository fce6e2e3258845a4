"""The paper's tree metrics (its "Metric Definitions", Tables 7-8), per session and over a suite.

Every definition lives in this table and nowhere else. "Events" means the session's log; a metric
that needs history (what the plan was before a repair, what a repair achieved) reads it, the rest
read the final tree, taken as a networkx graph (edges parent -> child).

| metric | per session | over a suite |
|---|---|---|
| success | the run finished `succeeded` and nothing refuted its answer: its answer check failed and no operator accepted it, or an operator rejected it; unless the caller knows better (a bundled task's check) | mean (rate) |
| answer_check | `met` or `not met`: the task's answer check (its required strings) on the final answer of the finished run; None when the task has none | - |
| answer_verdict | `accepted` or `rejected`: an operator's latest word on the finished run's answer (`answer_judged`); None when no one has given one | - |
| constraint_satisfaction | the caller's (met, total) when given (a bundled task's required strings); else the mean, over the candidates the final answer names, of the share of the task's constraints each meets (total minus its `unmet`); 0 with no answer; None when there are no constraints or the answer names no known candidate | mean over sessions where defined |
| browser_steps | actions executed (`action_executed` events; notes included) | mean |
| max_depth | longest root-to-node path in the final tree | mean |
| total/and/or/action_nodes | nodes in the final tree, all of them / by type (an unexpanded node counts only in the total) | mean |
| pruned_nodes | nodes whose final status is PRUNED | mean |
| deleted_nodes | nodes whose final status is DELETED (later siblings of a failed step) | mean |
| tree_efficiency | share of nodes neither PRUNED nor DELETED | mean |
| repair_triggers | failures of an AND or OR node after which the engine did not move on to another alternative: each would invoke repair, whether or not repair is enabled | rate: share of sessions with at least one |
| repair_attempts | `revision_used` events (repair calls, answered or not) | mean |
| recovered | repair attempts after which the repaired node next reached SUCCESS (before FAIL, PRUNED or DELETED); an attempt that added nothing never recovers | - |
| recovery_rate | recovered / repair_attempts; None without attempts | pooled over all attempts; 0 when there were none (the paper's convention) |
| originally_planned | nodes the planner's expansions made (not the root), with no repair- or operator-made node above them | - |
| plan_preservation | share of the originally planned nodes that end neither DELETED nor pruned by a repair; None when there are none | mean over sessions where defined |
| total_revisions | tree modifications: expansions (`node_expanded`) + repairs that changed the tree (`revision_used` ok) + prunings (changes to PRUNED or DELETED; a subtree is one) | mean |
| nodes_revised | distinct nodes an expansion, repair or pruning was applied to | mean |
| operator_edits | applied operator commands that change the plan (inject, prune, edit, reopen, force, edit_action) | mean |
| operator_nodes | nodes an operator made | mean |
| operator_successes | SUCCESS nodes of the final tree that an operator made or edited, or that descend from one | mean |
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Literal, cast

import networkx as nx
from pydantic import BaseModel, ConfigDict

from planner.events import (
    Cause,
    CommandApplied,
    Event,
    Kind,
    ModelCalled,
    RevisionUsed,
    StatusChanged,
)
from planner.questions import Question
from planner.state import RunStatus, SessionState, apply
from planner.status import REMOVED
from planner.tree import ROOT_ID, NodeType, Origin, Status, Tree

__all__ = [
    "PLAN_EDITS",
    "SUITE_ROWS",
    "SessionMetrics",
    "SuiteMetrics",
    "SuiteRow",
    "session_metrics",
    "suite_metrics",
    "tree_graph",
]

PLAN_EDITS = frozenset({"inject", "prune", "edit", "reopen", "force", "edit_action"})
"""Operator command kinds that change the plan (the others steer the run: pause, approve, budget...)."""

_ENDED = frozenset({Status.SUCCESS, Status.FAIL, Status.PRUNED, Status.DELETED})
_NOT_A_MOVE = frozenset({Kind.STEP, Kind.MODEL_CALL})


class SessionMetrics(BaseModel):
    """One session's figures; see the module docstring for each definition."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    success: bool
    answer_check: Literal["met", "not met"] | None
    answer_verdict: Literal["accepted", "rejected"] | None
    constraint_satisfaction: float | None
    browser_steps: int
    max_depth: int
    total_nodes: int
    and_nodes: int
    or_nodes: int
    action_nodes: int
    pruned_nodes: int
    deleted_nodes: int
    tree_efficiency: float
    repair_triggers: int
    repair_attempts: int
    recovered: int
    recovery_rate: float | None
    originally_planned: int
    plan_preservation: float | None
    expansions: int
    repairs: int
    prunings: int
    total_revisions: int
    nodes_revised: int
    operator_edits: int
    operator_nodes: int
    operator_successes: int


class SuiteMetrics(BaseModel):
    """A suite's figures: rates as fractions (0-1), counts as means per session."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sessions: int
    success_rate: float
    constraint_satisfaction: float | None
    browser_steps: float
    max_depth: float
    total_nodes: float
    and_nodes: float
    or_nodes: float
    action_nodes: float
    pruned_nodes: float
    tree_efficiency: float
    repair_trigger_rate: float
    recovery_rate: float
    plan_preservation: float | None
    total_revisions: float
    nodes_revised: float
    operator_edits: float
    operator_nodes: float
    operator_successes: float


@dataclass(frozen=True, slots=True)
class SuiteRow:
    """One row of the Table 7 layout: a section heading (`field` None) or a metric of `SuiteMetrics`."""

    label: str
    field: str | None = None
    unit: Literal["%", "mean"] = "mean"


SUITE_ROWS: tuple[SuiteRow, ...] = (
    SuiteRow("Task Performance"),
    SuiteRow("Success Rate", "success_rate", "%"),
    SuiteRow("Constraint Satisfaction", "constraint_satisfaction", "%"),
    SuiteRow("Tree Structure"),
    SuiteRow("Browser Steps", "browser_steps"),
    SuiteRow("Max Depth", "max_depth"),
    SuiteRow("Total Nodes", "total_nodes"),
    SuiteRow("AND Nodes", "and_nodes"),
    SuiteRow("OR Nodes", "or_nodes"),
    SuiteRow("Action Nodes", "action_nodes"),
    SuiteRow("Repair & Pruning"),
    SuiteRow("Pruned Nodes", "pruned_nodes"),
    SuiteRow("Tree Efficiency", "tree_efficiency", "%"),
    SuiteRow("Repair Trigger Rate", "repair_trigger_rate", "%"),
    SuiteRow("Recovery Rate", "recovery_rate", "%"),
    SuiteRow("Plan Preservation", "plan_preservation", "%"),
    SuiteRow("Tree Revisions"),
    SuiteRow("Total Revisions", "total_revisions"),
    SuiteRow("Nodes Revised", "nodes_revised"),
    SuiteRow("Operator"),
    SuiteRow("Operator Edits", "operator_edits"),
    SuiteRow("Operator Nodes", "operator_nodes"),
    SuiteRow("Successes Under Operator Edits", "operator_successes"),
)
"""The paper's Table 7, row by row, with the operator's share added at the end."""


def tree_graph(tree: Tree) -> nx.DiGraph:
    """The tree as a directed graph, parent -> child, each node carrying its `Node` as `node`."""
    graph = nx.DiGraph()
    for node in tree.walk():
        graph.add_node(node.id, node=node)
        if node.parent is not None:
            graph.add_edge(node.parent, node.id)
    return graph


@dataclass(slots=True)
class _History:
    """What the log says that the final tree no longer does, gathered in one fold of the events."""

    repair_triggers: int = 0
    repair_attempts: int = 0
    recovered: int = 0
    expansions: int = 0
    repairs: int = 0
    prunings: int = 0
    operator_edits: int = 0
    revised: set[str] = field(default_factory=set)
    removed_by_repair: set[str] = field(default_factory=set)


def _history(events: Iterable[Event]) -> _History:
    """Replay the log once, watching what each failure led to and what each repair achieved.

    The fold is `planner.state.apply`, so the statuses seen here are exactly the session's.
    """
    state = SessionState()
    found = _History()
    failed: set[str] = set()  # AND/OR nodes that just failed, waiting for the engine's next move on them
    repairing: set[str] = set()  # nodes between their repair call and its `revision_used`
    watched: set[str] = set()  # nodes a repair changed, until they next succeed or fail
    for event in events:
        apply(state, event)
        node_id = event.node_id
        if node_id in failed and event.kind not in _NOT_A_MOVE:
            failed.discard(node_id)
            if not _switches_alternative(event):
                found.repair_triggers += 1
        match event.kind:
            case Kind.NODE_EXPANDED:
                found.expansions += 1
                found.revised.add(cast(str, node_id))
            case Kind.MODEL_CALL if cast(ModelCalled, event.payload).question is Question.REPAIR:
                repairing.add(cast(str, node_id))
            case Kind.REVISION_USED:
                found.repair_attempts += 1
                repairing.discard(cast(str, node_id))
                if cast(RevisionUsed, event.payload).ok:
                    found.repairs += 1
                    found.revised.add(cast(str, node_id))
                    watched.add(cast(str, node_id))
            case Kind.STATUS_CHANGED:
                status = cast(StatusChanged, event.payload).status
                node = state.tree[cast(str, node_id)]
                if status in REMOVED:
                    found.prunings += 1
                    found.revised.add(node.id)
                    if node.parent in repairing:
                        found.removed_by_repair.add(node.id)
                elif status is Status.FAIL and node.type in (NodeType.AND, NodeType.OR):
                    failed.add(node.id)
                for watched_id in [w for w in watched if state.tree[w].status in _ENDED]:
                    watched.discard(watched_id)
                    found.recovered += state.tree[watched_id].status is Status.SUCCESS
            case Kind.COMMAND_APPLIED:
                found.operator_edits += cast(CommandApplied, event.payload).command.get("kind") in PLAN_EDITS
            case _:
                pass
    return found


def _switches_alternative(event: Event) -> bool:
    """The engine's move after an OR failure when an untried alternative is left (or an operator reopened it)."""
    if event.kind in (Kind.ROLLBACK, Kind.NODE_RESET):
        return True
    return event.kind is Kind.STATUS_CHANGED and cast(StatusChanged, event.payload).status is Status.VISITED


def session_metrics(
    state: SessionState,
    events: Sequence[Event],
    *,
    success: bool | None = None,
    constraints_met: tuple[int, int] | None = None,
) -> SessionMetrics:
    """Every metric of one session: `state` is the fold of `events` (the whole log, from event 1).

    `success` and `constraints_met` (met, total) come from a task's own checks when there are some.
    """
    tree = state.tree
    graph = tree_graph(tree)
    nodes = [tree[n] for n in graph.nodes]
    depths = nx.single_source_shortest_path_length(graph, ROOT_ID) if ROOT_ID in graph else {}
    history = _history(events)
    by_type = {kind: sum(1 for n in nodes if n.type is kind) for kind in NodeType}
    by_status = {status: sum(1 for n in nodes if n.status is status) for status in Status}
    total = len(nodes)

    made_elsewhere = [n.id for n in nodes if n.origin is not Origin.PLANNER]
    below_elsewhere = set(made_elsewhere).union(*(nx.descendants(graph, n) for n in made_elsewhere))
    original = [n for n in nodes if n.id != ROOT_ID and n.id not in below_elsewhere]
    preserved = [n for n in original if n.status is not Status.DELETED and n.id not in history.removed_by_repair]
    edited = [n.id for n in nodes if n.protected]
    under_operator = set(edited).union(*(nx.descendants(graph, n) for n in edited))
    check, verdict = state.answer_check, state.answer_verdict
    refuted = state.cause in (Cause.ANSWER_MISSED, Cause.ANSWER_REJECTED)  # the fold's word on the answer

    return SessionMetrics(
        success=state.status is RunStatus.SUCCEEDED and not refuted if success is None else success,
        answer_check=None if check is None else ("met" if check.passed else "not met"),
        answer_verdict=None if verdict is None else ("accepted" if verdict.accepted else "rejected"),
        constraint_satisfaction=_constraint_satisfaction(state, constraints_met),
        browser_steps=state.metrics.actions,
        max_depth=max(depths.values(), default=0),
        total_nodes=total,
        and_nodes=by_type[NodeType.AND],
        or_nodes=by_type[NodeType.OR],
        action_nodes=by_type[NodeType.ACTION],
        pruned_nodes=by_status[Status.PRUNED],
        deleted_nodes=by_status[Status.DELETED],
        tree_efficiency=_share(total - by_status[Status.PRUNED] - by_status[Status.DELETED], total) or 0.0,
        repair_triggers=history.repair_triggers,
        repair_attempts=history.repair_attempts,
        recovered=history.recovered,
        recovery_rate=_share(history.recovered, history.repair_attempts),
        originally_planned=len(original),
        plan_preservation=_share(len(preserved), len(original)),
        expansions=history.expansions,
        repairs=history.repairs,
        prunings=history.prunings,
        total_revisions=history.expansions + history.repairs + history.prunings,
        nodes_revised=len(history.revised),
        operator_edits=history.operator_edits,
        operator_nodes=sum(1 for n in nodes if n.origin is Origin.OPERATOR),
        operator_successes=sum(1 for n in nodes if n.status is Status.SUCCESS and n.id in under_operator),
    )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _constraint_satisfaction(state: SessionState, given: tuple[int, int] | None) -> float | None:
    if given is not None:
        met, total = given
        return _share(met, total)
    total = len(state.constraints or ())
    if not total:
        return None
    answer = (state.final_answer or "").casefold()
    if not answer.strip():
        return 0.0
    named = [c for c in state.candidates.values() if c.name.casefold() in answer]
    if not named:
        return None
    return fmean(max(0, total - len(c.unmet)) / total for c in named)


def suite_metrics(sessions: Sequence[SessionMetrics]) -> SuiteMetrics:
    """The suite's figures over its sessions, as the module docstring's last column says (all 0 for none)."""

    def mean(name: str) -> float:
        return _mean([getattr(s, name) for s in sessions])

    def mean_defined(name: str) -> float | None:
        values = [v for s in sessions if (v := getattr(s, name)) is not None]
        return fmean(values) if values else None

    attempts = sum(s.repair_attempts for s in sessions)
    return SuiteMetrics(
        sessions=len(sessions),
        success_rate=_mean([s.success for s in sessions]),
        constraint_satisfaction=mean_defined("constraint_satisfaction"),
        browser_steps=mean("browser_steps"),
        max_depth=mean("max_depth"),
        total_nodes=mean("total_nodes"),
        and_nodes=mean("and_nodes"),
        or_nodes=mean("or_nodes"),
        action_nodes=mean("action_nodes"),
        pruned_nodes=mean("pruned_nodes"),
        tree_efficiency=mean("tree_efficiency"),
        repair_trigger_rate=_mean([s.repair_triggers > 0 for s in sessions]),
        recovery_rate=sum(s.recovered for s in sessions) / attempts if attempts else 0.0,
        plan_preservation=mean_defined("plan_preservation"),
        total_revisions=mean("total_revisions"),
        nodes_revised=mean("nodes_revised"),
        operator_edits=mean("operator_edits"),
        operator_nodes=mean("operator_nodes"),
        operator_successes=mean("operator_successes"),
    )


def _mean(values: Sequence[float]) -> float:
    return fmean(values) if values else 0.0
