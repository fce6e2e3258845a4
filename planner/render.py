"""Plain-text rendering of a plan, for the CLI, reports and model prompts."""

from __future__ import annotations

from planner.status import REMOVED
from planner.tree import Node, NodeType, Origin, Tree

__all__ = ["TYPE_TAG", "node_line", "tree_text"]

TYPE_TAG = {NodeType.AND: "AND", NodeType.OR: "OR", NodeType.ACTION: "ACT", NodeType.UNKNOWN: "?"}
"""The short tag a node's type is shown with wherever a plan is drawn in text."""


def node_line(node: Node) -> str:
    """`[0.2] (OR) Select a recipe [VISITED] score=0.9 (operator)`: one node, everything a reader needs."""
    parts = [f"[{node.id}] ({TYPE_TAG[node.type]}) {node.description}"]
    if node.action:
        parts.append(f"-> {node.action}")
    parts.append(f"[{node.status.value}]")
    if node.score is not None:
        parts.append(f"score={node.score:g}")
    if node.origin is not Origin.PLANNER:
        parts.append(f"({node.origin.value})")
    return " ".join(parts)


def tree_text(tree: Tree, *, hide_removed: bool = False) -> str:
    """The whole tree, indented by depth, in plan order."""
    lines = []
    for node in tree.walk():
        if hide_removed and node.status in REMOVED:
            continue
        lines.append("  " * node.depth + "- " + node_line(node))
    return "\n".join(lines)
