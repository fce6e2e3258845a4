"""The one place that decides which status changes are legal.

Collections follow the paper's Table 30; the transition table is our reading of Figure 11 plus the
operator's powers (reopen, prune, inject under a finished node).
"""

from __future__ import annotations

from planner.errors import InvalidTransition
from planner.tree import Node, NodeType, Status, Tree

__all__ = ["CLOSED", "IN_PROGRESS", "REMOVED", "REOPENABLE", "given_steps", "legal_for_type", "move"]

CLOSED = frozenset({Status.SUCCESS, Status.PRUNED, Status.DELETED})
"""No longer processed by the traversal."""

REMOVED = frozenset({Status.PRUNED, Status.DELETED})
"""Not counted among a node's valid children."""

REOPENABLE = frozenset({Status.FAIL, Status.PRUNED, Status.DELETED})
"""What an operator may return to UNVISITED: a node that failed or was taken out of the plan."""

IN_PROGRESS = frozenset({Status.VISITED, Status.FAIL})
"""Entered and not finished: an OR node keeps working on such an alternative (a FAIL one is being repaired)."""

_ALLOWED: dict[Status, frozenset[Status]] = {
    Status.UNVISITED: frozenset({Status.VISITED, Status.SUCCESS, Status.FAIL, Status.PRUNED, Status.DELETED}),
    Status.VISITED: frozenset({Status.SUCCESS, Status.FAIL, Status.PRUNED, Status.DELETED, Status.UNVISITED}),
    Status.SUCCESS: frozenset({Status.VISITED, Status.PRUNED}),
    Status.FAIL: frozenset({Status.VISITED, Status.PRUNED, Status.DELETED, Status.UNVISITED}),
    Status.PRUNED: frozenset({Status.UNVISITED}),
    Status.DELETED: frozenset({Status.UNVISITED}),
}

_FOR_TYPE: dict[NodeType, frozenset[Status]] = {
    NodeType.UNKNOWN: frozenset({Status.UNVISITED, Status.FAIL, Status.PRUNED, Status.DELETED}),
    NodeType.ACTION: frozenset(Status),
    NodeType.AND: frozenset(Status),
    NodeType.OR: frozenset(Status),
}
"""An AND/OR node is UNVISITED when an operator gave it children before the traversal reached it."""


def move(node: Node, new: Status) -> None:
    """Set `node`'s status, or raise `InvalidTransition` unless the table allows the change.

    The only writer of `Node.status`, so a fold of any log, edited or not, cannot reach a state
    the table forbids.
    """
    if new is not node.status and new not in _ALLOWED[node.status]:
        raise InvalidTransition(f"node {node.id}: {node.status} -> {new} is not a legal transition")
    node.status = new


def legal_for_type(node: Node) -> bool:
    """Whether the node's status can occur for its type (an unexpanded node is never VISITED or SUCCESS)."""
    return node.status in _FOR_TYPE[node.type]


def given_steps(tree: Tree, node: Node) -> list[Node]:
    """The steps an operator gave `node` before it was expanded ("start with these, and let the
    planner plan the rest"): its open children while it is not expanded. Expanding a node again
    closes its open children first, so an unexpanded node's open children are only ever these."""
    if node.type is not NodeType.UNKNOWN:
        return []
    return [child for child in tree.children(node) if child.status not in CLOSED]
