"""Measure what an operator adds: the bundled demo tasks run three ways, side by side.

`python -m demo eval` runs every task (or `--tasks`) on a fresh demo shop under three conditions:

- **baseline**: no operator; guarded actions are approved, as the suite does.
- **operator**: the simulated operator (`demo.operator_sim`) follows a policy through the
  command queue, one step boundary at a time.
- **oracle**: the task's recorded `correction` (demo/README.md), sent after the session's first two
  steps; only with the demo model, since a correction names node ids of its plan (`NO_ORACLE`).

Each run reports success, the edits made, steps, model calls and the latency of the first edit;
`rescued` is the share of baseline failures the operator turned into successes with at most
`RESCUE_EDITS` edits. The shop runs as a program, since sessions never imports the demo built on it
(docs/architecture.md, "demo/evaluation.py").
"""

from __future__ import annotations

import re
import selectors
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from demo.operator_sim import ConsoleView, Intervention, Policy, SimulatedOperator, settle
from demo.tasks import DemoTask, check_answer, load_tasks, select_tasks
from planner.state import RunStatus, SessionState
from sessions.backends import parse_model_spec, prepare_model
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.errors import SessionsError
from sessions.store import EventStore
from sessions.worker.runner import Runner

__all__ = [
    "CONDITIONS",
    "NO_ORACLE",
    "RESCUE_EDITS",
    "RunResult",
    "ShopUnavailable",
    "TaskResult",
    "bundled_shop",
    "evaluate",
    "format_table",
    "has_oracle",
    "report",
    "rescued",
    "run_condition",
]

CONDITIONS = ("baseline", "operator", "oracle")
RESCUE_EDITS = 2
"""A rescue counts when it took at most this many edits: the evaluation measures a light correction of
the plan, not an operator rewriting it."""
NO_ORACLE = "no oracle: its correction is written for the demo model's plan"
"""Why a run with another model has no oracle condition: a correction edits the demo plan's node ids."""
SHOP_START_S = 60.0
"""How long the bundled shop may take to print its address; it takes well under a second."""
HOOK_POLL_S = 0.01
"""How long the runner waits for a command at a step boundary. A condition's hook queues its command
before it returns, so the runner's default wait for a person's command (0.1 s) would only add a tenth
of a second to every step the simulated operator single-steps: 13 s of a 130-step run."""

Site = Callable[[], AbstractContextManager[str]]
"""Starts a fresh shop for one run and gives its base URL ("http://127.0.0.1:PORT")."""


class ShopUnavailable(SessionsError):
    """The bundled demo shop could not be started as a program."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """One task under one condition."""

    condition: str
    success: bool
    status: str
    answer: str | None
    missing: list[str]
    edits: int
    edit_kinds: list[str]
    approvals: int
    interventions: list[dict[str, Any]]
    steps: int
    model_calls: int
    actions: int
    wall_s: float
    wrong_step: int | None
    intervention_step: int | None
    latency_steps: int | None
    latency_s: float | None
    session_id: str


@dataclass(frozen=True, slots=True)
class TaskResult:
    task: str
    kind: str
    baseline: RunResult
    operator: RunResult
    oracle: RunResult | None

    @property
    def rescued(self) -> bool:
        """The baseline failed and the operator succeeded with few enough edits."""
        return not self.baseline.success and self.operator.success and self.operator.edits <= RESCUE_EDITS


@contextmanager
def bundled_shop() -> Iterator[str]:
    """A fresh demo shop in a process of its own, for one run; its base URL."""
    command = [sys.executable, "-m", "demo.shop", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(SHOP_START_S)
        line = process.stdout.readline() if ready else ""
        found = re.search(r"http://\S+", line)
        if found is None:
            raise ShopUnavailable(
                f"the demo shop did not start (`{' '.join(command[1:])}` printed {line.strip()[:80]!r}); run it by hand "
                "to see why"
            )
        yield found[0].rstrip("/")
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- the three conditions ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Hook:
    """What a condition does at a step boundary (a runner's `on_idle`), and what it sent."""

    store: EventStore
    session_id: str
    view: ConsoleView = field(init=False)
    interventions: list[Intervention] = field(default_factory=list)
    approvals: int = 0

    def __post_init__(self) -> None:
        self.view = ConsoleView(self.store, self.session_id)

    def approve(self) -> bool:
        queue_command(self.store, self.session_id, {"kind": "approve"})
        self.approvals += 1
        return True


@dataclass(slots=True)
class _Baseline(_Hook):
    """No operator: approve each guarded action and leave on any other pause."""

    def __call__(self, _runner_state: SessionState) -> bool:
        if self.store.pending(self.session_id):
            return True
        state = self.view.refresh()
        return state.status is RunStatus.AWAITING_APPROVAL and self.approve()


@dataclass(slots=True)
class _Oracle(_Hook):
    """Step twice (the constraints, the root's expansion), send the task's correction, resume; approve."""

    correction: dict[str, Any] = field(default_factory=dict)

    def __call__(self, _runner_state: SessionState) -> bool:
        if self.store.pending(self.session_id):
            return True
        state = self.view.refresh()
        if state.status is RunStatus.AWAITING_APPROVAL:
            return self.approve()
        if state.status is not RunStatus.PAUSED:
            return False
        if state.steps < 2:
            queue_command(self.store, self.session_id, {"kind": "step"})
        elif not self.interventions:
            command = dict(self.correction)
            command["command_id"] = queue_command(self.store, self.session_id, command)
            node = _correction_target(state, command)
            self.interventions.append(
                Intervention(command["kind"], "correction", command, node, _planned_at(state, node), state.steps)
            )
            queue_command(self.store, self.session_id, {"kind": "resume"})
        else:
            return False
        return True


def _correction_target(state: SessionState, command: dict[str, Any]) -> str | None:
    """The node a correction is about: the edited node, or the one an inject goes before (else its parent)."""
    if command["kind"] != "inject":
        return command.get("node")
    parent = state.tree.get(command["parent"])
    position = command.get("position")
    if parent is not None and position is not None and position < len(parent.children):
        return parent.children[position]
    return command["parent"]


def _planned_at(state: SessionState, node_id: str | None) -> int:
    node = state.tree.get(node_id or "")
    return node.step_created if node is not None else state.steps


def run_condition(
    store: EventStore,
    task: DemoTask,
    base_url: str,
    condition: str,
    *,
    model: str,
    policy: Policy,
    artifacts: Path | None,
) -> RunResult:
    """One task under one condition ("baseline", "operator" with `policy`, or "oracle") on the shop at `base_url`."""
    started = time.perf_counter()
    paused = condition != "baseline"
    session_id = create_session(store, task.task, model, start_url=base_url + task.start_path, paused=paused)
    hook: _Hook | SimulatedOperator
    if condition == "operator":
        hook = SimulatedOperator(store, session_id, policy)
    elif condition == "oracle":
        assert task.correction is not None
        hook = _Oracle(store, session_id, correction=task.correction.command())
    else:
        hook = _Baseline(store, session_id)
    Runner(store, session_id, artifacts=artifacts, poll=HOOK_POLL_S).run(on_idle=hook)
    state = hook.view.refresh()
    settle(store, session_id, hook.interventions)
    verdict = check_answer(task, state.final_answer or "")
    applied = [i for i in hook.interventions if i.applied]
    edits = [i for i in applied if i.is_edit]
    first = edits[0] if edits else None
    latency_s = None
    if first is not None and first.applied_at is not None and first.node_step in hook.view.step_at:
        latency_s = round(first.applied_at - hook.view.step_at[first.node_step], 2)
    approvals = hook.approvals + sum(1 for i in applied if i.kind == "approve")
    return RunResult(
        condition=condition,
        success=state.status is RunStatus.SUCCEEDED and verdict.passed,
        status=state.status.value,
        answer=state.final_answer,
        missing=verdict.missing,
        edits=len(edits),
        edit_kinds=[i.kind for i in edits],
        approvals=approvals,
        interventions=[
            {"rule": i.rule, "kind": i.kind, "node": i.node, "step": i.step, "applied": i.applied, "reason": i.reason}
            for i in hook.interventions
        ],
        steps=state.steps,
        model_calls=state.metrics.model_calls,
        actions=state.metrics.actions,
        wall_s=round(time.perf_counter() - started, 2),
        wrong_step=first.node_step if first else None,
        intervention_step=first.step if first else None,
        latency_steps=first.step - first.node_step if first else None,
        latency_s=latency_s,
        session_id=session_id,
    )


def has_oracle(model: str) -> bool:
    """Whether `model` plans as the corrections assume: only the demo model's plans have their node ids."""
    return parse_model_spec(model).kind == "demo"


def evaluate(
    store: EventStore,
    *,
    policy: Policy,
    site: Site = bundled_shop,
    model: str = "demo",
    tasks_file: Path | None = None,
    only: list[str] | None = None,
    artifacts: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[TaskResult]:
    """Every chosen task under the three conditions, each run on a fresh shop of its own.

    The tasks, the ids in `only` and the model are checked before any shop starts, so a typo is
    refused at once."""
    from planner.browser import browser_kept  # Playwright loads only once an evaluation runs

    tasks = select_tasks(load_tasks(tasks_file), only)
    prepare_model(model, store)
    oracle = has_oracle(model)
    if not oracle and progress is not None:
        progress(NO_ORACLE)
    results = []
    with browser_kept():  # one Chromium for the evaluation, a fresh context for each run
        for task in tasks:
            runs: dict[str, RunResult] = {}
            for condition in CONDITIONS:
                if condition == "oracle" and (task.correction is None or not oracle):
                    continue
                with site() as base_url:
                    runs[condition] = run_condition(
                        store, task, base_url, condition, model=model, policy=policy, artifacts=artifacts
                    )
                if progress is not None:
                    run = runs[condition]
                    progress(f"{task.id} {condition}: {'success' if run.success else run.status}, {run.edits} edits")
            results.append(TaskResult(task.id, task.kind.value, runs["baseline"], runs["operator"], runs.get("oracle")))
    return results


# -- the report --------------------------------------------------------------------------------------


def rescued(results: list[TaskResult]) -> float | None:
    """The share of baseline failures the operator rescued with few edits; None when nothing failed."""
    failures = [r for r in results if not r.baseline.success]
    return round(sum(r.rescued for r in failures) / len(failures), 4) if failures else None


def report(results: list[TaskResult], *, model: str, policy: str) -> dict[str, Any]:
    """The `--out` document: one entry per task (the three runs in full), and the totals.

    Steps and model calls are summed per condition over the tasks it ran (the oracle only over the
    tasks with a correction); the edit kinds and latencies are the operator's."""
    tasks = [
        {
            "task": r.task,
            "kind": r.kind,
            "baseline_success": r.baseline.success,
            "operator_success": r.operator.success,
            "oracle_success": r.oracle.success if r.oracle else None,
            "edits": r.operator.edits,
            "edit_kinds": r.operator.edit_kinds,
            "rescued": r.rescued,
            **{condition: asdict(run) if run else None for condition, run in _runs(r).items()},
        }
        for r in results
    ]
    failures = [r for r in results if not r.baseline.success]
    runs = {c: [run for r in results if (run := _runs(r)[c]) is not None] for c in CONDITIONS}
    operator = runs["operator"]
    return {
        "model": model,
        "operator": policy,
        "oracle": None if has_oracle(model) else NO_ORACLE,
        "tasks": tasks,
        "rescued": rescued(results),
        "baseline_failures": len(failures),
        "rescued_tasks": [r.task for r in failures if r.rescued],
        "success": {c: sum(run.success for run in runs[c]) for c in CONDITIONS},
        "oracle_tasks": len(runs["oracle"]),
        "steps": {c: sum(run.steps for run in runs[c]) for c in CONDITIONS},
        "model_calls": {c: sum(run.model_calls for run in runs[c]) for c in CONDITIONS},
        "operator_edits": sum(run.edits for run in operator),
        "edit_kinds": dict(sorted(Counter(kind for run in operator for kind in run.edit_kinds).items())),
        "mean_latency_steps": _mean([run.latency_steps for run in operator]),
        "mean_latency_s": _mean([run.latency_s for run in operator]),
    }


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that were measured (a run without an edit has no latency); None if none were."""
    measured = [value for value in values if value is not None]
    return round(sum(measured) / len(measured), 2) if measured else None


def _runs(result: TaskResult) -> dict[str, RunResult | None]:
    return {"baseline": result.baseline, "operator": result.operator, "oracle": result.oracle}


def _cell(run: RunResult | None) -> str:
    return "–" if run is None else ("yes" if run.success else "no")


def format_table(results: list[TaskResult], totals: dict[str, Any]) -> str:
    """Per task: success under each condition, the operator's edits, steps and model calls (baseline /
    operator / oracle), and the operator's latency; then a row of `totals` (`report`'s) and the rescue rate."""
    header = ["task", "base", "oper", "oracle", "edits (kinds)", "steps b/o/c", "calls b/o/c", "latency steps (s)"]
    rows = []
    for r in results:
        op = r.operator
        kinds = f"{op.edits} ({', '.join(op.edit_kinds)})" if op.edits else "0"
        triple = [r.baseline, op, r.oracle]
        rows.append(
            [
                r.task,
                _cell(r.baseline),
                _cell(op),
                _cell(r.oracle),
                kinds,
                "/".join("–" if x is None else str(x.steps) for x in triple),
                "/".join("–" if x is None else str(x.model_calls) for x in triple),
                _latency(op.latency_steps, op.latency_s),
            ]
        )
    success, kinds = totals["success"], totals["edit_kinds"]
    oracle_ran = totals["oracle_tasks"] > 0
    rows.append(
        [
            f"all {len(results)}",
            str(success["baseline"]),
            str(success["operator"]),
            f"{success['oracle']}/{totals['oracle_tasks']}" if oracle_ran else "–",
            f"{totals['operator_edits']}" + (f" ({', '.join(f'{k} {n}' for k, n in kinds.items())})" if kinds else ""),
            "/".join(str(totals["steps"][c]) if c != "oracle" or oracle_ran else "–" for c in CONDITIONS),
            "/".join(str(totals["model_calls"][c]) if c != "oracle" or oracle_ran else "–" for c in CONDITIONS),
            _latency(totals["mean_latency_steps"], totals["mean_latency_s"], "mean "),
        ]
    )
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in [header, *rows]]
    share = totals["rescued"]
    lines.append(
        f"success: baseline {success['baseline']}/{len(results)}, operator {success['operator']}/{len(results)}, "
        + (f"oracle {success['oracle']}/{totals['oracle_tasks']}" if totals["oracle"] is None else totals["oracle"])
        + f"; operator edits {totals['operator_edits']}"
    )
    lines.append(
        f"rescued: {len(totals['rescued_tasks'])} of {totals['baseline_failures']} baseline failures "
        f"with <= {RESCUE_EDITS} edits" + (f" ({100 * share:.0f} %)" if share is not None else "")
    )
    return "\n".join(lines)


def _latency(steps: float | None, seconds: float | None, label: str = "") -> str:
    """A latency as "steps (seconds)" after `label`, or "–" when nothing was measured."""
    return "–" if steps is None or seconds is None else f"{label}{steps:g} ({seconds:.1f})"
