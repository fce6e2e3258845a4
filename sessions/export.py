"""The trace: a session as one JSON document (the CLI's `export`, the console's download)."""

from __future__ import annotations

from typing import Any

from planner.events import Event
from planner.state import SessionState
from planner.status import REMOVED
from planner.tree import Origin, Status

__all__ = ["trace", "tree_metrics"]


def tree_metrics(state: SessionState) -> dict[str, Any]:
    """Tree-shape and run metrics in the spirit of the paper's Tables 7-8."""
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
    }


def trace(session_id: str, state: SessionState, events: list[Event]) -> dict[str, Any]:
    return {
        "session": {
            "id": session_id,
            "task": state.task,
            "status": state.status.value,
            "reason": state.reason,
            "final_answer": state.final_answer,
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
                "revisions": node.revisions,
                "url": node.url,
                "reason": node.reason,
            }
            for node in state.tree.walk()
        ],
        "notes": list(state.notes),
        "events": [event.to_row() for event in events],
        "metrics": tree_metrics(state),
    }
