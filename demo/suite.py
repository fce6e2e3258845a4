"""Run the demo task suite against the bundled shop and check every answer.

`python -m demo suite` (`demo.cli`) runs every task; the tests call `run_suite` directly. Guarded actions are approved by the suite itself (recorded as ordinary
operator commands), unless `approve=False`, in which case they are rejected, which is how the
suite shows what the guard protects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from demo.shop import start_shop
from demo.tasks import DemoTask, check_answer, load_tasks, select_tasks
from planner.config import EngineConfig
from planner.state import RunStatus, SessionState
from sessions.backends import prepare_model
from sessions.client.commands import queue_command
from sessions.client.creation import create_session
from sessions.client.export import tree_metrics
from sessions.store import EventStore
from sessions.worker.runner import Runner

__all__ = ["SuiteRow", "auto_approver", "format_table", "run_suite", "run_task"]


@dataclass(frozen=True, slots=True)
class SuiteRow:
    task: str
    kind: str
    success: bool
    status: str
    missing: list[str]
    browser_steps: int
    nodes: int
    max_depth: int
    pruned: int
    repairs: int
    model_calls: int
    approvals: int
    wall_s: float
    session_id: str
    answer: str | None


def auto_approver(store: EventStore, session_id: str, approve: bool = True) -> Callable[[SessionState], bool]:
    """An `on_idle` hook that answers every guarded action (once) and leaves the loop on any other pause."""

    def on_idle(state: SessionState) -> bool:
        if state.status is RunStatus.AWAITING_APPROVAL and state.approval is not None:
            if not any(c.payload.get("kind") in ("approve", "reject") for c in store.pending(session_id)):
                verdict = (
                    {"kind": "approve"} if approve else {"kind": "reject", "reason": "suite runs without approval"}
                )
                queue_command(store, session_id, verdict)
            return True
        return False

    return on_idle


def run_task(
    store: EventStore,
    task: DemoTask,
    base_url: str,
    *,
    model: str = "demo",
    config: EngineConfig | None = None,
    approve: bool = True,
    artifacts: Path | None = None,
) -> SuiteRow:
    started = time.perf_counter()
    session_id = create_session(store, task.task, model, start_url=base_url + task.start_path, config=config)
    state = Runner(store, session_id, artifacts=artifacts).run(on_idle=auto_approver(store, session_id, approve))
    metrics = tree_metrics(state)
    verdict = check_answer(task, state.final_answer or "")
    return SuiteRow(
        task=task.id,
        kind=task.kind.value,
        success=state.status is RunStatus.SUCCEEDED and verdict.passed,
        status=state.status.value,
        missing=verdict.missing,
        browser_steps=metrics["actions"],
        nodes=metrics["nodes"],
        max_depth=metrics["max_depth"],
        pruned=metrics["pruned"],
        repairs=metrics["repairs"],
        model_calls=metrics["model_calls"],
        approvals=metrics["commands_applied"],
        wall_s=round(time.perf_counter() - started, 2),
        session_id=session_id,
        answer=state.final_answer,
    )


def run_suite(
    store: EventStore,
    *,
    tasks_file: Path | None = None,
    model: str = "demo",
    config: EngineConfig | None = None,
    approve: bool = True,
    artifacts: Path | None = None,
    only: list[str] | None = None,
) -> list[SuiteRow]:
    """Every task on a fresh shop of its own, so carts and orders never leak between tasks.

    The task file, the ids in `only` and the model are checked before any shop starts, so a typo
    is refused at once (`TaskError`, `UnknownModel`, `ScriptError`) rather than after a task ran.
    """
    from planner.browser import browser_kept  # Playwright loads only once a suite runs

    tasks = select_tasks(load_tasks(tasks_file), only)
    prepare_model(model, store)
    rows = []
    with browser_kept():  # one Chromium for the suite, a fresh context for each task
        for task in tasks:
            with start_shop() as shop:
                rows.append(
                    run_task(store, task, shop.url, model=model, config=config, approve=approve, artifacts=artifacts)
                )
    return rows


_COLUMNS = ("task", "success", "browser_steps", "nodes", "max_depth", "pruned", "repairs", "model_calls", "wall_s")


def format_table(rows: list[SuiteRow]) -> str:
    data = [[str(asdict(row)[c]) for c in _COLUMNS] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in data)) if data else len(c) for i, c in enumerate(_COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in data]
    passed = sum(row.success for row in rows)
    lines.append(f"{passed} of {len(rows)} tasks met their criteria")
    return "\n".join(lines)
