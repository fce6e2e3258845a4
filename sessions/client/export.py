"""Session exports for people and other tools: the trace (a session as one JSON document, the CLI's
`export`), the plan as Graphviz DOT or SVG, and a Markdown run report.

All of them are plain functions of a state and its events, so the console's download buttons, the
CLI, `sessions.client.report` and tests share one implementation. Node descriptions, actions, reasons and
notes come from web pages and models, so every one of them is escaped for the format it lands in: DOT
quoting is left to the `graphviz` package, and Markdown-active characters are backslash-escaped (see
`md_line`) so page text can never become a link, an image, HTML or table structure in the report.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from planner.events import (
    ActionExecuted,
    CommandApplied,
    CommandRejected,
    Event,
    Kind,
    SessionFinished,
    SessionStatus,
    StatusChanged,
)
from planner.metrics import session_metrics
from planner.render import node_line
from planner.state import SessionState
from planner.status import REMOVED
from planner.tree import Node, NodeType, Origin, Status
from sessions.client.markdown import md_line, md_url
from sessions.client.verdict import judged_line, standing
from sessions.errors import SessionsError

if TYPE_CHECKING:
    import graphviz

__all__ = [
    "ExportUnavailable",
    "markdown_report",
    "trace",
    "trace_json",
    "tree_dot",
    "tree_metrics",
    "tree_svg",
]


def tree_metrics(state: SessionState, events: Sequence[Event] | None = None) -> dict[str, Any]:
    """Run counts, and with the session's events (from event 1) the paper's tree metrics under `analysis`.

    The analysis is `planner.metrics.session_metrics`, where every definition is written down; it
    needs the log (what a repair achieved, what the plan was before it), so it is left out without it.
    """
    nodes = list(state.tree.walk())
    metrics = state.metrics
    by_status = {status.value: 0 for status in Status}
    for node in nodes:
        by_status[node.status.value] += 1
    return {
        "steps": state.steps,
        "nodes": len(nodes),
        "max_depth": max((node.depth for node in nodes), default=0),
        "statuses": by_status,
        "pruned": by_status[Status.PRUNED.value],
        "deleted": by_status[Status.DELETED.value],
        "operator_nodes": sum(1 for node in nodes if node.origin is Origin.OPERATOR),
        "repair_nodes": sum(1 for node in nodes if node.origin is Origin.REPAIR),
        "valid_nodes": sum(1 for node in nodes if node.status not in REMOVED),
        "actions": metrics.actions,
        "failed_actions": metrics.failed_actions,
        "repairs": metrics.repairs,
        "repair_attempts": metrics.repair_attempts,
        "rollbacks": metrics.rollbacks,
        "model_calls": metrics.model_calls,
        "model_errors": metrics.model_errors,
        "input_tokens": metrics.input_tokens,
        "output_tokens": metrics.output_tokens,
        "cache_read_tokens": metrics.cache_read_tokens,
        "cache_write_tokens": metrics.cache_write_tokens,
        "cost_usd": round(metrics.cost_usd, 6),
        "commands_applied": metrics.commands_applied,
        "commands_rejected": metrics.commands_rejected,
        "notes": len(state.notes),
    } | ({"analysis": session_metrics(state, events).model_dump()} if events is not None else {})


def trace(session_id: str, state: SessionState, events: list[Event]) -> dict[str, Any]:
    return {
        "session": {
            "id": session_id,
            "task": state.task,
            "status": state.status.value,
            "standing": standing(state.status.value, state.cause.value if state.cause else None),
            "reason": state.reason,
            "final_answer": state.final_answer,
            "answer_verdict": state.answer_verdict.model_dump(mode="json") if state.answer_verdict else None,
            "constraints": state.constraints,
            "candidates": [candidate.model_dump(mode="json") for candidate in state.candidates.values()],
            "model": state.model,
            "start_url": state.start_url,
            "config": state.config.model_dump(mode="json"),
            "forked_from": list(state.forked_from) if state.forked_from else None,
            "at_seq": state.seq,
        },
        "nodes": [
            {
                "id": node.id,
                "parent": node.parent,
                "type": node.type.value,
                "status": node.status.value,
                "description": node.description,
                "action": node.action,
                "score": node.score,
                "origin": node.origin.value,
                "made_by": state.made_by.get(node.id),
                "edited_by": state.edited_by.get(node.id),
                "template": {"name": node.template.name, "version": node.template.version} if node.template else None,
                "revisions": node.revisions,
                "url": node.url,
                "reason": node.reason,
            }
            for node in state.tree.walk()
        ],
        "notes": list(state.notes),
        "events": [event.to_row() for event in events],
        "metrics": tree_metrics(state, events),
    }


# -- Markdown-safe text -----------------------------------------------------------------------------

_SVG_HELP = "SVG export needs Graphviz's dot program: apt-get install graphviz (or brew install graphviz)"

_DOT_SHAPE = {NodeType.AND: "box", NodeType.OR: "diamond", NodeType.ACTION: "ellipse", NodeType.UNKNOWN: "triangle"}
# Light tints of the chart's status colours: DOT labels sit on the fill, so it has to stay readable.
_DOT_FILL = {
    Status.UNVISITED: "#EEEEEE",
    Status.VISITED: "#D6E9F8",
    Status.SUCCESS: "#D4EDDA",
    Status.FAIL: "#F8D7DA",
    Status.PRUNED: "#FAFAFA",
    Status.DELETED: "#FAFAFA",
}
_DOT_WRAP = 36
_DOT_LINES = 3

_CELL_CHARS = 160


class ExportUnavailable(SessionsError):
    """An export needs a program or package that is not installed; the message says how to get it."""


# -- Graphviz --------------------------------------------------------------------------------------


def tree_dot(state: SessionState) -> str:
    """The plan as Graphviz DOT: for docs, papers and tools that lay out graphs themselves."""
    return _digraph(state).source


def tree_svg(state: SessionState) -> bytes:
    """The plan rendered to SVG by Graphviz's `dot`, which must be installed on the machine."""
    gv = _graphviz()
    try:
        return _digraph(state).pipe(format="svg")
    except gv.ExecutableNotFound as error:
        raise ExportUnavailable(_SVG_HELP) from error


def _graphviz() -> ModuleType:
    """The `graphviz` package, imported only when a DOT/SVG export is asked for, so the rest of the
    console works without it."""
    try:
        import graphviz
    except ImportError as error:
        raise ExportUnavailable("DOT and SVG export need the graphviz Python package: pip install graphviz") from error
    return graphviz


def _digraph(state: SessionState) -> graphviz.Digraph:
    gv = _graphviz()
    dot = gv.Digraph(
        "plan",
        graph_attr={"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.45"},
        node_attr={"style": "filled", "fontname": "Helvetica", "fontsize": "10"},
        edge_attr={"color": "#888888", "arrowsize": "0.6"},
    )
    # Node ids are dotted numbers ("0.2.1"), never containing ':' (which DOT edges read as a port).
    for node in state.tree.walk():
        removed = node.status in REMOVED
        attrs = {"shape": _DOT_SHAPE[node.type], "fillcolor": _DOT_FILL[node.status]}
        if removed:
            attrs.update(style="filled,dashed", fontcolor="#666666")
        if node.origin is Origin.OPERATOR:
            attrs.update(penwidth="2", color="purple")
        dot.node(node.id, label=_dot_label(gv, node), **attrs)
        if node.parent is not None:
            dot.edge(node.parent, node.id, **({"style": "dashed"} if removed else {}))
    return dot


def _dot_label(gv: ModuleType, node: Node) -> str:
    """`id TYPE`, the wrapped description, then `STATUS`: each part escaped so backslashes and `<...>`
    stay literal, joined by DOT line breaks; the package escapes the quotes when it quotes the label."""
    status = node.status.value
    if node.score is not None:
        status += f" · score {node.score:g}"
    if node.origin is not Origin.PLANNER:
        status += f" · {node.origin.value}"
    text = " ".join(node.description.split())
    description = textwrap.wrap(text, _DOT_WRAP, max_lines=_DOT_LINES, placeholder=" …")
    parts = [f"{node.id} {node.type.value}", *description, status]
    return gv.nohtml("\\n".join(gv.escape(part) for part in parts))


# -- Markdown report -------------------------------------------------------------------------------


def markdown_report(session_id: str, state: SessionState, events: list[Event]) -> str:
    """A run report to read, file or paste into an issue: outcome, metrics, the plan, what operators
    did and what failed."""
    sections = [
        _summary(session_id, state, events),
        _constraints(state),
        _final_answer(state),
        _candidates(state),
        _metrics(state, events),
        _diagnosis(state),
        _plan(state),
        _notes(state),
        _interventions(events),
        _failures(state, events),
        _pages(events),
        _timeline(events),
    ]
    return "\n\n".join(sections) + "\n"


def trace_json(session_id: str, state: SessionState, events: list[Event]) -> str:
    """The full trace (session, nodes, notes, events, metrics) as readable JSON."""
    return json.dumps(trace(session_id, state, events), indent=2, ensure_ascii=False)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _summary(session_id: str, state: SessionState, events: list[Event]) -> str:
    status = f"**Status:** {standing(state.status.value, state.cause.value if state.cause else None)}"
    if state.reason:
        status += f": {md_line(state.reason)}"
    lines = [f"# Run report: {md_line(session_id)}", "", f"- **Task:** {md_line(state.task)}", f"- {status}"]
    if state.model:
        lines.append(f"- **Model:** {md_line(state.model)}")
    if state.started_by:
        lines.append(f"- **Started by:** {md_line(state.started_by)}")
    if state.start_url:
        lines.append(f"- **Start URL:** {md_url(state.start_url)}")
    if state.forked_from:
        lines.append(f"- **Forked from:** {md_line(state.forked_from[0])} at event {state.forked_from[1]}")
    lines.append(f"- **Steps:** {state.steps} · **Events:** {len(events)}")
    return "\n".join(lines)


def _constraints(state: SessionState) -> str:
    if not state.constraints:
        return "## Constraints\n\n_None recorded._"
    return "## Constraints\n\n" + "\n".join(f"- {md_line(line)}" for line in state.constraints)


def _candidates(state: SessionState) -> str:
    if not state.candidates:
        return "## Candidates\n\n_None reported._"
    rows = [
        [
            md_line(c.verdict),
            md_line(c.name),
            md_line(", ".join(c.unmet) or "–"),
            md_line("; ".join(f"{k}: {v}" for k, v in c.fields.items()) or "–"),
        ]
        for c in state.candidates.values()
    ]
    return "## Candidates\n\n" + _table(["Verdict", "Item", "Fails", "Seen"], rows)


def _final_answer(state: SessionState) -> str:
    check = state.answer_check
    verdict = ""
    if check is not None:
        verdict = (
            "\n\n**Answer check: met.**"
            if check.passed
            else ("\n\n**Answer check: not met** — missing: " + ", ".join(md_line(s) for s in check.missing))
        )
    judged = state.answer_verdict
    if judged is not None:
        verdict += f"\n\n{md_line(judged_line(judged))}"
    if not state.final_answer:
        return "## Final answer\n\n_No final answer._" + verdict
    quoted = [f"> {md_line(line)}" if line.strip() else ">" for line in state.final_answer.splitlines()]
    return "## Final answer\n\n" + "\n".join(quoted) + verdict


def _metrics(state: SessionState, events: list[Event]) -> str:
    rows = []
    for key, value in tree_metrics(state, events).items():
        if key == "analysis":
            rows += [[name.replace("_", " "), _figure(figure)] for name, figure in value.items()]
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{name} {count}" for name, count in value.items() if count) or "none"
        rows.append([key.replace("_", " "), md_line(value)])
    return "## Metrics\n\n" + _table(["Metric", "Value"], rows)


def _figure(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "–" if value is None else str(value)


def _diagnosis(state: SessionState) -> str:
    diagnosis = state.diagnosis
    if diagnosis is None:
        return "## Diagnosis\n\n_None._"
    if diagnosis.diagnosis is None:
        return f"## Diagnosis\n\n_The diagnosis failed: {md_line(diagnosis.error or 'no reason given')}_"
    d = diagnosis.diagnosis
    lines = [
        "## Diagnosis",
        "",
        f"- **Root cause:** {md_line(d.root_cause)}",
        f"- **Category:** {md_line(d.failure_category.value)} · **Confidence:** {d.confidence} of 5 · **By:** {md_line(diagnosis.model)}",
        f"- **What should have been done:** {md_line(d.what_should_have_been_done)}",
    ]
    rows = [
        [
            str(step.step_number),
            md_line(step.node_id or "–"),
            md_line(step.what_happened),
            md_line(step.what_went_wrong),
        ]
        for step in d.critical_steps
    ]
    return "\n".join(lines) + "\n\n" + _table(["Step", "Node", "What happened", "What went wrong"], rows)


def _plan(state: SessionState) -> str:
    lines = ["  " * node.depth + "- " + md_line(node_line(node)) for node in state.tree.walk()]
    return "## Plan\n\n" + ("\n".join(lines) if lines else "_No plan yet._")


def _notes(state: SessionState) -> str:
    if not state.notes:
        return "## Notes\n\n_None._"
    return "## Notes\n\n" + "\n".join(f"- {md_line(note)}" for note in state.notes)


def _interventions(events: list[Event]) -> str:
    rows = []
    for event in events:
        if event.kind not in (Kind.COMMAND_APPLIED, Kind.COMMAND_REJECTED):
            continue
        handled = cast(CommandApplied | CommandRejected, event.payload)
        command = handled.command
        applied = isinstance(handled, CommandApplied)
        detail = _command_detail(command) if applied else cast(CommandRejected, handled).reason
        rows.append(
            [
                str(event.seq),
                md_line(handled.by or "–"),
                "applied" if applied else "rejected",
                md_line(command.get("kind", "?")),
                md_line(event.node_id or "–"),
                md_line(detail, _CELL_CHARS) or "–",
            ]
        )
    if not rows:
        return "## Operator interventions\n\n_None._"
    return "## Operator interventions\n\n" + _table(["Event", "By", "Result", "Command", "Target", "Detail"], rows)


def _command_detail(command: dict[str, Any]) -> str:
    """What the command said besides its kind, id and target: goals, reason, new text, scores..."""
    parts = []
    for key, value in command.items():
        if key in ("kind", "command_id", "by", "node", "parent") or value is None:
            continue
        shown = "; ".join(str(item) for item in value) if isinstance(value, list) else str(value)
        parts.append(f"{key.replace('_', ' ')}: {shown}")
    return ", ".join(parts)


def _failures(state: SessionState, events: list[Event]) -> str:
    rows = []
    for event in events:
        node = state.tree.get(event.node_id) if event.node_id is not None else None
        payload = event.payload
        if isinstance(payload, ActionExecuted) and not payload.ok:
            what = f"action {payload.action}"
            reason = payload.error or ""
        elif isinstance(payload, StatusChanged) and payload.status is Status.FAIL:
            what = node.description if node is not None else ""
            reason = payload.reason or ""
        else:
            continue
        rows.append(
            [str(event.seq), md_line(event.node_id or "–"), md_line(what, 80), md_line(reason, _CELL_CHARS) or "–"]
        )
    if not rows:
        return "## Failures\n\n_None._"
    return "## Failures\n\n" + _table(["Event", "Node", "What", "Reason"], rows)


def _pages(events: list[Event]) -> str:
    """The page each action left the browser on, its URL a code span (`md_url`): copied out intact."""
    rows = [
        [str(event.seq), md_line(event.node_id or "–"), md_line(payload.action, 80), md_url(payload.url)]
        for event in events
        if isinstance(payload := event.payload, ActionExecuted) and payload.url
    ]
    if not rows:
        return "## Pages\n\n_None._"
    return "## Pages\n\n" + _table(["Event", "Node", "Action", "Page"], rows)


def _timeline(events: list[Event]) -> str:
    if not events:
        return "## Timeline\n\n_No events._"
    first, last = events[0], events[-1]
    span = f"{len(events)} events, seq {first.seq} to {last.seq}"
    if first.at and last.at:
        span += f", over {last.at - first.at:.1f} s"
    lines = ["## Timeline", "", span + "."]
    changes = []
    for event in events:
        if isinstance(event.payload, SessionStatus | SessionFinished):
            reason = event.payload.reason
            change = f"- {event.seq}: {md_line(event.payload.status)}"
            changes.append(change + (f" ({md_line(reason)})" if reason else ""))
    if changes:
        lines += ["", "Status changes:", "", *changes]
    counts = Counter(event.kind.value for event in events)
    lines += ["", _table(["Event kind", "Count"], [[md_line(kind), str(count)] for kind, count in counts.items()])]
    return "\n".join(lines)
