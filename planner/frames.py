"""The DFS stack, derived from the tree.

The paper's iterative DFS keeps an explicit stack of (node, frame) pairs. Here the stack is a
function of the tree: ancestors of the current node sit in EXITING (they were re-pushed after
their expansion), and the current node is ENTERING, EXITING or FAILED by its own status and that of
its children. Nothing else is stored, so operator edits, forks and crash recovery cannot desync it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from planner.status import CLOSED, IN_PROGRESS
from planner.tree import ROOT_ID, Node, NodeType, Status, Tree

__all__ = ["Frame", "Position", "active_path", "next_position", "or_choice", "upcoming"]


class Frame(StrEnum):
    ENTERING = "ENTERING"
    EXITING = "EXITING"
    FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class Position:
    """The node the next step works on, and in which frame."""

    node: Node
    frame: Frame


def or_choice(tree: Tree, node: Node) -> Node | None:
    """The alternative an OR node works on: the one in progress, else the forced or best-ranked untried one."""
    untried: list[Node] = []
    for child in tree.children(node):
        status = child.status
        if status is Status.SUCCESS:
            return None
        if status in IN_PROGRESS:
            return child
        if status is Status.UNVISITED:
            untried.append(child)
    for child in untried:
        if child.id == node.forced:
            return child
    return max(untried, key=lambda child: child.score or 0.0) if untried else None


def _active_child(tree: Tree, node: Node) -> Node | None:
    if node.type is NodeType.AND:
        nodes = tree.nodes
        for child_id in node.children:
            child = nodes[child_id]
            if child.status not in CLOSED:
                return child
        return None
    return or_choice(tree, node)


def next_position(tree: Tree) -> Position | None:
    """Where the traversal stands, or None once the root is closed."""
    node = tree.nodes.get(ROOT_ID)
    if node is None or node.status in CLOSED:
        return None
    while True:
        if node.status is Status.FAIL:
            return Position(node, Frame.FAILED)
        if node.type is NodeType.UNKNOWN or node.type is NodeType.ACTION:
            return Position(node, Frame.ENTERING)
        child = _active_child(tree, node)
        if child is None:
            return Position(node, Frame.EXITING)
        node = child


def active_path(tree: Tree) -> list[tuple[Node, Frame]]:
    """The whole derived stack, root first: what a console shows as "where the agent is"."""
    position = next_position(tree)
    if position is None:
        return []
    path = [(ancestor, Frame.EXITING) for ancestor in tree.ancestors(position.node)]
    path.reverse()
    path.append((position.node, position.frame))
    return path


def upcoming(tree: Tree, node: Node, limit: int) -> list[Node]:
    """The unexpanded sub-goals the traversal enters next, in order, if `node` and each of them succeed.

    These are the nodes a model may plan actions for while it reads the page `node` reached. The
    walk stops at the first later sibling that is already expanded (its own children come first)
    and climbs past OR parents, which are done once one alternative succeeds.
    """
    found: list[Node] = []
    current = node
    while len(found) < limit and (parent := tree.parent(current)) is not None:
        if parent.type is NodeType.AND:
            for child_id in parent.children[parent.children.index(current.id) + 1 :]:
                child = tree.nodes[child_id]
                if child.status in CLOSED:
                    continue
                if child.type is not NodeType.UNKNOWN or child.status is not Status.UNVISITED:
                    return found
                found.append(child)
                if len(found) == limit:
                    return found
        current = parent
    return found
