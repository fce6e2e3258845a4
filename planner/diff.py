"""What changed between two versions of a plan: the timeline marks it, a fork is compared with its
parent through it, and each plan edit records what it did.

Nodes are never deleted from a tree (pruned and deleted ones stay as history), so two versions of
one session's plan differ by nodes that exist in only one of them and by nodes whose status, type or
description moved. A fork copies its parent's ids up to the fork point, so the same comparison says
where a fork and its parent went separate ways.

A plan edit (an operator's command, or the engine expanding a node again or repairing it) is
described node by node, before and after (`NodeChange`): the operator's commands record theirs in
their `command_applied` event when they are applied (`EditRecorder`), so reading
them costs no replay and the fold does no extra work; `PlanChanges` reads them back while a log is
folded and adds the engine's re-expansions and repairs, which it finds by comparing the state before
and after their events (`edit_diffs` does the same for a whole log).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from planner.events import CommandApplied, Event, Kind, NodeChange, NodeFace, NodesAdded
from planner.state import Recorder, SessionState, apply
from planner.status import REMOVED
from planner.tree import Node, Origin, Tree

__all__ = [
    "EditDiff",
    "EditRecorder",
    "PlanChanges",
    "PlanDiff",
    "edit_diff",
    "edit_diffs",
    "plan_diff",
]


@dataclass(frozen=True, slots=True)
class PlanDiff:
    """`added`: only in the later plan; `missing`: only in the earlier; `changed`: in both, different."""

    added: tuple[str, ...]
    missing: tuple[str, ...]
    changed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.missing or self.changed)


def _id_order(node_id: str) -> list[int]:
    return [int(part) for part in node_id.split(".")]


def plan_diff(before: Tree, after: Tree) -> PlanDiff:
    """Node ids added, missing and changed (status, type or description) from `before` to `after`, in id order."""
    old, new = before.nodes, after.nodes
    changed = [
        node_id
        for node_id in old.keys() & new.keys()
        if (old[node_id].status, old[node_id].type, old[node_id].description)
        != (new[node_id].status, new[node_id].type, new[node_id].description)
    ]

    def ordered(ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(ids, key=_id_order))

    return PlanDiff(
        added=ordered(new.keys() - old.keys()), missing=ordered(old.keys() - new.keys()), changed=ordered(changed)
    )


_Face = tuple[object, ...]
_Snapshot = Mapping[str, _Face]
"""Nodes' faces as plain values (`NodeFace`'s fields in order), made into `NodeFace`s only for the nodes that moved."""


def _face(node: Node) -> _Face:
    return (
        node.status,
        node.type,
        node.description,
        node.action,
        node.reason,
        node.forced,
        node.protected,
        node.earlier,
        node.earlier_actions,
    )


def _snapshot(tree: Tree, ids: Iterable[str]) -> dict[str, _Face]:
    """The faces of `ids`, to compare with the tree after an edit."""
    return {node_id: _face(tree.nodes[node_id]) for node_id in ids}


def _changes_since(before: _Snapshot, tree: Tree, ids: Iterable[str]) -> list[NodeChange]:
    """The nodes among `ids` that are new since `before` or whose face moved, in id order."""
    nodes = tree.nodes
    moved = [(node_id, now) for node_id in ids if before.get(node_id) != (now := _face(nodes[node_id]))]
    moved.sort(key=lambda pair: _id_order(pair[0]))
    return [
        NodeChange(id=node_id, after=NodeFace(*now), before=_as_face(before.get(node_id)))  # type: ignore[arg-type]
        for node_id, now in moved
    ]


def _as_face(face: _Face | None) -> NodeFace | None:
    return None if face is None else NodeFace(*face)  # type: ignore[arg-type]


def _hold(held: dict[str, _Face], tree: Tree, kind: Kind, node_id: str | None, subtree: bool) -> None:
    """Keep the faces an event about to be applied may change: its node's, and with `subtree` its descendants'."""
    node = tree.get(node_id) if node_id is not None else None
    if node is None:
        return
    held.setdefault(node.id, _face(node))
    if subtree and kind is Kind.STATUS_CHANGED:
        for child in tree.descendants(node):
            held.setdefault(child.id, _face(child))


_ORDERED = frozenset({Kind.NODES_ADDED, Kind.CHILDREN_REORDERED})
"""The events that change a node's list of children: its order before the first is what a reorder is undone to."""


class EditRecorder(Recorder):
    """A recorder that also keeps each touched node's face from before its first event, so an edit's
    changes cost what the edit touched, not a pass over the whole tree.

    A node whose children the edit reordered also carries its children's order, before and after
    (`NodeFace.order`), so the diff shows the move and an undo can put the old order back.
    """

    __slots__ = ("_added", "_before", "_orders", "_reordered")

    def __init__(self, state: SessionState) -> None:
        super().__init__(state)
        self._before: dict[str, _Face] = {}
        self._added: list[str] = []
        self._orders: dict[str, tuple[str, ...]] = {}
        self._reordered: list[str] = []

    def record(self, kind: Kind, node_id: str | None = None, **fields: Any) -> Event:
        _hold(self._before, self.state.tree, kind, node_id, bool(fields.get("subtree")))
        if kind in _ORDERED and node_id is not None and node_id in self.state.tree:
            self._orders.setdefault(node_id, tuple(self.state.tree[node_id].children))
            if kind is Kind.CHILDREN_REORDERED and node_id not in self._reordered:
                self._reordered.append(node_id)
        event = super().record(kind, node_id, **fields)
        if kind is Kind.NODES_ADDED:
            self._added.extend(spec.id for spec in cast(NodesAdded, event.payload).nodes)
        return event

    def changes(self) -> list[NodeChange]:
        """The nodes the events recorded so far added or changed, before and after, in id order."""
        changes = _changes_since(self._before, self.state.tree, [*self._before, *self._added])
        return self._with_orders(changes) if self._reordered else changes

    def _with_orders(self, changes: list[NodeChange]) -> list[NodeChange]:
        """`changes` with each reordered node's order before and after (the node is listed even when
        nothing else about it moved)."""
        by_id = {change.id: change for change in changes}
        tree = self.state.tree
        for node_id in self._reordered:
            before, after = self._orders[node_id], tuple(tree[node_id].children)
            if before == after:
                continue
            face = _as_face(self._before[node_id])
            change = by_id.get(node_id) or NodeChange(id=node_id, after=NodeFace(*_face(tree[node_id])), before=face)  # type: ignore[arg-type]
            by_id[node_id] = NodeChange(
                id=node_id,
                after=replace(change.after, order=after),
                before=replace(change.before, order=before) if change.before is not None else None,
            )
        return sorted(by_id.values(), key=lambda change: _id_order(change.id))


@dataclass(frozen=True, slots=True)
class EditDiff:
    """What one plan edit did to the plan.

    `seq` is the event that completed it; `by` the command's kind ("inject", "undo", ...) or the
    engine's "repair" or "re-expansion"; `node` where it was made. `added` are new nodes; `removed`
    ones it took out of the plan (now PRUNED or DELETED, as history); `changed` the others it moved.
    """

    seq: int
    by: str
    node: str | None
    added: tuple[NodeChange, ...]
    removed: tuple[NodeChange, ...]
    changed: tuple[NodeChange, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def edit_diff(seq: int, by: str, node: str | None, changes: Iterable[NodeChange]) -> EditDiff:
    """`changes` sorted into added, removed and changed nodes."""
    added, removed, changed = [], [], []
    for change in changes:
        if change.before is None:
            added.append(change)
        elif change.before.status not in REMOVED and change.after.status in REMOVED:
            removed.append(change)
        else:
            changed.append(change)
    return EditDiff(seq, by, node, tuple(added), tuple(removed), tuple(changed))


class PlanChanges:
    """Every plan edit of a log, found while the log is folded: `apply` folds one event into a state,
    as `planner.state.apply` does, and notes the edit that event completes. A reader that folds the
    log anyway (the console's follower) so gets every diff without a second fold, and one that reads
    a growing log pays for the new events only.

    The operator's commands (and undos) bring the diff they recorded; the engine's re-expansions and
    repairs are found by comparing the state before and after their events. A re-expansion is the
    expansion of a node that already has children (a reopened or edited node sent back to
    expansion); a repair is the pruning of a failed node's children (recorded just before) together
    with the children it added.
    """

    __slots__ = ("_held", "diffs")

    def __init__(self) -> None:
        self.diffs: list[EditDiff] = []
        """The edits so far, in log order."""
        self._held: dict[str, _Face] = {}
        """Faces before the status changes recorded since the last other event: a repair's prunes."""

    def apply(self, state: SessionState, event: Event) -> EditDiff | None:
        """Fold `event` into `state` (the state of the log up to the event before); the edit it completes, if any."""
        tree = state.tree
        diff: EditDiff | None = None
        if event.kind is Kind.COMMAND_APPLIED:
            applied = cast(CommandApplied, event.payload)
            if applied.changes:
                by = str(applied.command.get("kind", "command"))
                diff = edit_diff(event.seq, by, event.node_id, applied.changes)
        elif (
            event.kind is Kind.NODE_EXPANDED
            and event.node_id is not None
            and event.node_id in tree
            and tree[event.node_id].children
        ):
            before = _snapshot(tree, [event.node_id])
            apply(state, event)
            touched = [event.node_id, *tree[event.node_id].children]
            return self._note(
                edit_diff(event.seq, "re-expansion", event.node_id, _changes_since(before, tree, touched))
            )
        elif event.kind is Kind.NODES_ADDED and cast(NodesAdded, event.payload).origin is Origin.REPAIR:
            parent = event.node_id or ""
            before = {k: v for k, v in self._held.items() if k.startswith(f"{parent}.")}
            before.update(_snapshot(tree, [parent]))
            apply(state, event)
            touched = [*before, *(n.id for n in cast(NodesAdded, event.payload).nodes)]
            return self._note(edit_diff(event.seq, "repair", event.node_id, _changes_since(before, tree, touched)))
        if event.kind is Kind.STATUS_CHANGED:
            _hold(self._held, tree, event.kind, event.node_id, getattr(event.payload, "subtree", False))
        else:
            self._held = {}
        apply(state, event)
        return diff if diff is None else self._note(diff)

    def _note(self, diff: EditDiff) -> EditDiff:
        self.diffs.append(diff)
        self._held = {}
        return diff


def edit_diffs(events: Iterable[Event]) -> list[EditDiff]:
    """Every plan edit in a log, in order (see `PlanChanges`)."""
    state, changes = SessionState(), PlanChanges()
    for event in events:
        changes.apply(state, event)
    return changes.diffs
