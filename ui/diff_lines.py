"""A plan edit's diff as plain lines, one per node, and who made the edit: the last edit under the
Edit plan forms and the Plan changes view say it the same way. Escaping is the caller's (`md_line`)."""

from __future__ import annotations

from planner.diff import EditDiff
from planner.events import NodeChange, NodeFace
from sessions.client.markdown import short

__all__ = ["diff_lines", "made_by"]

_SHOWN_TEXT = 120
"""A description or action quoted in an edit's diff is clamped here (the node shows all of it)."""

_ENGINE = frozenset({"re-expansion", "repair"})
"""`EditDiff.by` of the edits the engine made; any other is an operator command's kind."""


def made_by(diff: EditDiff) -> str:
    """Who made the edit and what it was: "operator: inject at 0", "engine: repair of 0.3"."""
    if diff.by in _ENGINE:
        return f"engine: {diff.by} of {diff.node}"
    at = f" at {diff.node}" if diff.node else ""
    return f"operator: {diff.by.replace('_', ' ')}{at}"


def diff_lines(diff: EditDiff) -> list[str]:
    """One line per node: "added 0.4 · check the brand", "removed 0.3 · … (UNVISITED → PRUNED)",
    "changed 0.2 · description "a" → "b""."""
    lines = [f"added {c.id} · {short(c.after.description, _SHOWN_TEXT)}" for c in diff.added]
    lines += [
        f"removed {c.id} · {short(c.after.description, _SHOWN_TEXT)} ({_was(c).status.value} → {c.after.status.value})"
        for c in diff.removed
    ]
    lines += [f"changed {c.id} · {'; '.join(_moves(c))}" for c in diff.changed]
    return lines


def _was(change: NodeChange) -> NodeFace:
    return change.before if change.before is not None else change.after


def _moves(change: NodeChange) -> list[str]:
    """What moved on a changed node, before → after; an edit that only marks it as the operator's says so."""
    before, after = _was(change), change.after
    moves = [
        f"{name} {old.value} → {new.value}"
        for name, old, new in (
            ("status", before.status, after.status),
            ("type", before.type, after.type),
        )
        if old is not new
    ]
    moves += [
        f"{name} {_quoted(old)} → {_quoted(new)}"
        for name, old, new in (
            ("description", before.description, after.description),
            ("action", before.action, after.action),
            ("forced alternative", before.forced, after.forced),
        )
        if old != new
    ]
    if before.order != after.order:
        moves.append(f"order {', '.join(before.order or ())} → {', '.join(after.order or ())}")
    return moves or ["now kept from the model's own updates"]


def _quoted(text: str | None) -> str:
    return "none" if text is None else f"“{short(text, _SHOWN_TEXT)}”"
