"""The paper's ablation (its Tables 7-8): the suite under four conditions, one table.

`python -m demo suite --ablations` runs every task of the suite under Full (repair and OR
alternatives), OR only (no repair), Repair only (no OR alternatives) and Neither, computes the
metrics of `planner.metrics` per session and over each condition, and prints them in the layout of
Table 7: conditions as columns, metrics as rows. It writes the same as JSON and Markdown. Success
and constraint satisfaction come from each task's own check (its required strings), so the demo
model and any other model are scored alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from demo.suite import run_suite
from demo.tasks import load_tasks
from planner.config import EngineConfig
from planner.metrics import SUITE_ROWS, SessionMetrics, SuiteMetrics, session_metrics, suite_metrics
from sessions.store import EventStore
from sessions.store.reading import load_state

__all__ = ["CONDITIONS", "ablations_command", "format_table", "run_ablations", "to_json", "to_markdown"]

CONDITIONS: dict[str, EngineConfig] = {
    "Full": EngineConfig(),
    "OR only": EngineConfig(repair=False),
    "Repair only": EngineConfig(or_alternatives=False),
    "Neither": EngineConfig(repair=False, or_alternatives=False),
}
"""The paper's four conditions, in its column order."""


def run_ablations(
    store: EventStore,
    *,
    tasks_file: Path | None = None,
    model: str = "demo",
    artifacts: Path | None = None,
    only: list[str] | None = None,
) -> dict[str, list[SessionMetrics]]:
    """Every task under every condition; per condition, each session's metrics in task order."""
    required = {task.id: len(task.criteria.must_contain) for task in load_tasks(tasks_file)}
    results: dict[str, list[SessionMetrics]] = {}
    for name, config in CONDITIONS.items():
        rows = run_suite(store, tasks_file=tasks_file, model=model, config=config, artifacts=artifacts, only=only)
        results[name] = [
            session_metrics(
                load_state(store, row.session_id),
                store.load(row.session_id),
                success=row.success,
                constraints_met=(required[row.task] - len(row.missing), required[row.task]),
            )
            for row in rows
        ]
    return results


def _cell(suite: SuiteMetrics, field: str, unit: str) -> str:
    value = getattr(suite, field)
    if value is None:
        return "–"
    return f"{100 * value:.1f}" if unit == "%" else f"{value:.1f}"


def _rows(results: dict[str, list[SessionMetrics]]) -> list[list[str]]:
    suites = {name: suite_metrics(sessions) for name, sessions in results.items()}
    lines = []
    for row in SUITE_ROWS:
        if row.field is None:
            lines.append([row.label] + [""] * len(suites))
        else:
            label = row.label + (" (%)" if row.unit == "%" else "")
            lines.append([label] + [_cell(suite, row.field, row.unit) for suite in suites.values()])
    return lines


def format_table(results: dict[str, list[SessionMetrics]]) -> str:
    """The Table 7 layout as aligned text: rates in percent, counts as means per task."""
    header = ["", *results]
    rows = _rows(results)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *rows])


def to_markdown(results: dict[str, list[SessionMetrics]]) -> str:
    header = ["", *results]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in _rows(results):
        heading = all(not cell for cell in row[1:])
        cells = [f"**{row[0]}**" if heading else row[0], *row[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_json(results: dict[str, list[SessionMetrics]]) -> str:
    data = {
        name: {"suite": suite_metrics(sessions).model_dump(), "sessions": [s.model_dump() for s in sessions]}
        for name, sessions in results.items()
    }
    return json.dumps(data, indent=2)


def ablations_command(
    store: EventStore,
    *,
    model: str = "demo",
    tasks_file: Path | None = None,
    out: Path = Path("var/ablations.json"),
    artifacts: Path | None = None,
    only: list[str] | None = None,
) -> tuple[str, int]:
    """The CLI's `suite --ablations`: runs, writes `out` (JSON) and `out` with `.md`; returns (text, 0).

    The text is the table, then (last line) the JSON summary line the CLI prints last.
    """
    results = run_ablations(store, tasks_file=tasks_file, model=model, artifacts=artifacts, only=only)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_json(results))
    markdown = out.with_suffix(".md")
    markdown.write_text(to_markdown(results))
    summary = {"conditions": list(results), "json": str(out), "markdown": str(markdown)}
    return format_table(results) + "\n" + json.dumps(summary), 0
