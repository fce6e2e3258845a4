"""Diagnosis of a run: why it failed, in the fields of the paper's Table 10, and where in the run.

A model sees the tree first (the paper found it is what lets a diagnosis pinpoint the failure), and
what it cites must exist (docs/architecture.md, "planner/diagnosis.py").

The offline diagnosis (`offline_diagnosis`) reads the tree and the log alone, by these rules, the
first that applies deciding the category:

| rule | category | confidence |
|---|---|---|
| a browser action failed | navigation_error | 4 if the root did not succeed in the end, else 3 |
| a node's completion check said incomplete | verification_failure | 3 |
| the run stopped before the root closed (a step, cost or revision budget; an operator stop) | premature_stop | 3 |
| the answer names candidates that fail constraints | constraint_violation | 3 |
| a node failed with no action behind it (its expansion could not be grounded) | wrong_search_strategy | 2 |
| anything else (the run failed without a failed node; or nothing failed) | other | 1 |
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.errors import ModelOutputError
from planner.events import ActionExecuted, Event, NoteAdded, Observed, RevisionUsed, RolledBack, StatusChanged
from planner.questions import CriticalStep, Diagnosis, FailureCategory
from planner.state import SessionState
from planner.tree import ROOT_ID, NodeType, Status, Tree

if TYPE_CHECKING:
    from planner.questions import Reply

__all__ = [
    "MAX_CITED",
    "DiagnosisRun",
    "Step",
    "Trajectory",
    "check_citations",
    "diagnose",
    "offline_diagnosis",
    "steps",
    "trajectory",
]

MAX_CITED = 5
"""Failed actions the offline diagnosis cites; a model may cite up to 20 steps."""


@dataclass(frozen=True, slots=True)
class Step:
    """One browser action of the run, numbered from 1 in the order they ran."""

    number: int
    node_id: str
    action: str
    ok: bool
    error: str | None
    url: str | None
    notes: tuple[str, ...] = ()
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Trajectory:
    """What a diagnosis reads: the task, how the run ended, the tree with statuses, the steps and notes."""

    task: str
    constraints: tuple[str, ...]
    status: str
    reason: str | None
    final_answer: str | None
    tree: Tree
    steps: tuple[Step, ...]
    notes: tuple[str, ...]


def steps(events: Sequence[Event]) -> list[Step]:
    """The run's step sequence: each executed action with the notes and summary its observation gave."""

    found: list[Step] = []
    for event in events:
        payload = event.payload
        if isinstance(payload, ActionExecuted):
            found.append(
                Step(len(found) + 1, event.node_id or ROOT_ID, payload.action, payload.ok, payload.error, payload.url)
            )
        elif found and isinstance(payload, NoteAdded | Observed):
            last = found[-1]
            notes = (payload.text,) if isinstance(payload, NoteAdded) else tuple(payload.notes)
            summary = payload.summary if isinstance(payload, Observed) else last.summary
            found[-1] = Step(
                last.number, last.node_id, last.action, last.ok, last.error, last.url, last.notes + notes, summary
            )
    return found


def trajectory(state: SessionState, events: Sequence[Event]) -> Trajectory:
    return Trajectory(
        task=state.task,
        constraints=tuple(state.constraints or ()),
        status=state.status.value,
        reason=state.reason,
        final_answer=state.final_answer,
        tree=state.tree,
        steps=tuple(steps(events)),
        notes=tuple(state.notes),
    )


def check_citations(diagnosis: Diagnosis, trajectory: Trajectory) -> None:
    """Raise `ModelOutputError` naming the first critical step that cites a step or node the run does not have."""
    last = len(trajectory.steps)
    for cited in diagnosis.critical_steps:
        if cited.step_number > last:
            have = f"steps 1 to {last}" if last else "no browser steps"
            raise ModelOutputError(f"critical step {cited.step_number} does not exist: the run has {have}")
        if cited.node_id is not None and cited.node_id not in trajectory.tree:
            raise ModelOutputError(
                f"critical step {cited.step_number} names node {cited.node_id}, which is not in the tree"
            )


@dataclass(frozen=True, slots=True)
class DiagnosisRun:
    """The outcome of asking for a diagnosis: the accepted one, or why none was; every attempt's usage."""

    diagnosis: Diagnosis | None
    error: str | None
    attempts: int
    usage: tuple[dict[str, object], ...] = ()


def diagnose(ask: Callable[[Trajectory], Reply[Diagnosis]], trajectory: Trajectory, retries: int) -> DiagnosisRun:
    """Ask up to `retries` + 1 times for a diagnosis whose citations all exist.

    A malformed answer or a bad citation is retried; after the last attempt the diagnosis fails with
    that reason. `ModelUnavailable` (the model cannot be reached) is not caught: the caller says so.
    """
    usage: list[dict[str, object]] = []
    reason = "no attempt was made"
    for attempt in range(1, retries + 2):
        try:
            reply = ask(trajectory)
            usage.append(dict(reply.call.usage))
            check_citations(reply.output, trajectory)
        except ModelOutputError as error:
            if error.call is not None:
                usage.append(dict(error.call.usage))
            reason = error.reason
            continue
        return DiagnosisRun(reply.output, None, attempt, tuple(usage))
    return DiagnosisRun(None, f"no usable diagnosis after {retries + 1} attempts: {reason}", retries + 1, tuple(usage))


def offline_diagnosis(state: SessionState, events: Sequence[Event]) -> Diagnosis:
    """A diagnosis from the tree and the log alone, by the rules in the module docstring.

    Its critical steps are the failed actions (at most `MAX_CITED`), or the last step before the first
    failed node; it says what recovery tried (alternatives switched to, repairs and their outcomes)."""

    run = trajectory(state, events)
    tree = state.tree
    failed_steps = [s for s in run.steps if not s.ok]
    fails = [
        (e.node_id, e.payload.reason or "")
        for e in events
        if isinstance(e.payload, StatusChanged)
        and e.payload.status is Status.FAIL
        and e.node_id is not None
        and e.node_id in tree
    ]
    recovery = _recovery(events)
    path = _failing_path(tree)
    where = f" on the failing path {' > '.join(path)}" if len(path) > 1 else ""

    if failed_steps:
        first = failed_steps[0]
        reached_root = tree.root.status is not Status.SUCCESS
        return Diagnosis(
            root_cause=_cut(
                f"The browser action '{first.action}' at node {first.node_id} ({_desc(tree, first.node_id)}) failed: "
                f"{first.error or 'no reason recorded'}{where}."
            ),
            critical_steps=[_cite(tree, s) for s in failed_steps[:MAX_CITED]],
            what_should_have_been_done=_cut(
                f"Plan {first.node_id} around an element the page really has, or an alternative route to the same "
                f"goal. {recovery}"
            ),
            failure_category=FailureCategory.NAVIGATION_ERROR,
            confidence=4 if reached_root else 3,
        )
    before = _step_before(run.steps, events, fails[0][0] if fails else None)
    cited = [_cite(tree, before, "the last step before the failure")] if before is not None else []
    incomplete = [(n, r) for n, r in fails if "incomplete" in r]
    if incomplete:
        node_id, reason = incomplete[0]
        return Diagnosis(
            root_cause=_cut(f"Node {node_id} ({_desc(tree, node_id)}) failed its completion check: {reason}."),
            critical_steps=cited,
            what_should_have_been_done=_cut(
                f"Add the missing sub-goals under {node_id} before checking it. {recovery}"
            ),
            failure_category=FailureCategory.VERIFICATION_FAILURE,
            confidence=3,
        )
    if tree.root.status not in (Status.SUCCESS, Status.PRUNED, Status.FAIL):
        return Diagnosis(
            root_cause=_cut(f"The run stopped before the task's plan closed: {state.reason or 'no reason recorded'}."),
            critical_steps=cited,
            what_should_have_been_done=_cut(f"Raise the budget that stopped it, or resume. {recovery}"),
            failure_category=FailureCategory.PREMATURE_STOP,
            confidence=3,
        )
    violating = _named_violations(state)
    if violating:
        return Diagnosis(
            root_cause=_cut(
                f"The answer names {violating}, which the observations show failing the task's constraints."
            ),
            critical_steps=cited,
            what_should_have_been_done=_cut("Keep looking for items that meet every constraint, or say none does."),
            failure_category=FailureCategory.CONSTRAINT_VIOLATION,
            confidence=3,
        )
    if fails:
        node_id, reason = fails[0]
        return Diagnosis(
            root_cause=_cut(f"Node {node_id} ({_desc(tree, node_id)}) failed without a browser action: {reason}."),
            critical_steps=cited,
            what_should_have_been_done=_cut(
                f"Decompose {node_id} into sub-goals the page supports, or pick another strategy. {recovery}"
            ),
            failure_category=FailureCategory.WRONG_SEARCH_STRATEGY,
            confidence=2,
        )
    return Diagnosis(
        root_cause=_cut(
            f"No node failed; the run ended {state.status.value}: {state.reason or 'without a reason recorded'}."
        ),
        critical_steps=[],
        what_should_have_been_done="Compare the final answer with the task's criteria by hand; the tree shows no failure.",
        failure_category=FailureCategory.OTHER,
        confidence=1,
    )


def _cite(tree: Tree, step: Step, why: str | None = None) -> CriticalStep:
    return CriticalStep(
        step_number=step.number,
        node_id=step.node_id,
        what_happened=_cut(f"ran '{step.action}' at {step.node_id} ({_desc(tree, step.node_id)})"),
        what_went_wrong=_cut(why or step.error or "the action failed"),
    )


def _step_before(run_steps: Sequence[Step], events: Sequence[Event], node_id: str | None) -> Step | None:
    """The last step that ran before `node_id` first failed (all of them when nothing failed)."""

    count = 0
    for event in events:
        payload = event.payload
        if isinstance(payload, StatusChanged) and payload.status is Status.FAIL and event.node_id == node_id:
            break
        count += isinstance(payload, ActionExecuted)
    return run_steps[count - 1] if count else None


def _failing_path(tree: Tree) -> list[str]:
    """From the root down through the first child that failed or was pruned, as far as that goes."""
    path = [ROOT_ID] if ROOT_ID in tree else []
    node = tree.get(ROOT_ID)
    while node is not None:
        bad = [c for c in tree.children(node) if c.status in (Status.FAIL, Status.PRUNED)]
        node = bad[0] if bad else None
        if node is not None:
            path.append(node.id)
    return path


def _recovery(events: Sequence[Event]) -> str:
    """What the run tried after failures, in a sentence: alternatives switched to and repairs."""

    switched = [e.payload.to for e in events if isinstance(e.payload, RolledBack)]
    repairs = [(e.node_id, e.payload.ok) for e in events if isinstance(e.payload, RevisionUsed)]
    parts = []
    if switched:
        parts.append("it switched to the alternative " + ", ".join(str(s) for s in switched))
    if repairs:
        parts.append(
            "it repaired "
            + ", ".join(f"{node} ({'changed the plan' if ok else 'nothing added'})" for node, ok in repairs)
        )
    return ("Recovery: " + "; ".join(parts) + ".") if parts else "No recovery was tried."


def _named_violations(state: SessionState) -> str:
    answer = (state.final_answer or "").casefold()
    named = [c.name for c in state.candidates.values() if c.unmet and answer and c.name.casefold() in answer]
    return ", ".join(named[:3])


def _desc(tree: Tree, node_id: str) -> str:
    node = tree.get(node_id)
    if node is None:
        return "unknown node"
    kind = f"{node.type.value} " if node.type is not NodeType.UNKNOWN else ""
    return _cut(f"{kind}'{node.description}'", 160)


def _cut(text: str, limit: int = 1000) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
