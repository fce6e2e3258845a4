"""The AND/OR planning tree: nodes, their types and statuses, and read-only navigation.

The tree is plain data. It changes only through `planner.state.apply`, so a tree rebuilt from the
event log is the same object graph as the live one.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

__all__ = ["ROOT_ID", "Node", "NodeType", "Origin", "Status", "TemplateRef", "Tree"]

ROOT_ID = "0"


class NodeType(StrEnum):
    UNKNOWN = "UNKNOWN"
    AND = "AND"
    OR = "OR"
    ACTION = "ACTION"


class Status(StrEnum):
    UNVISITED = "UNVISITED"
    VISITED = "VISITED"
    SUCCESS = "SUCCESS"
    FAIL = "FAIL"
    PRUNED = "PRUNED"
    DELETED = "DELETED"


class Origin(StrEnum):
    PLANNER = "planner"
    REPAIR = "repair"
    OPERATOR = "operator"


@pydantic_dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class TemplateRef:
    """The saved plan template (and its version) an operator injected a node from (`planner.templates`)."""

    name: str
    version: int

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class Node(BaseModel):
    """One sub-goal, alternative or action.

    `protected` is set on nodes an operator created, edited or reopened: the model's global tree
    update may neither prune nor rewrite them. `earlier` keeps the descriptions a rewrite replaced,
    oldest first, and `earlier_actions` the actions an operator's edit of a held action replaced, so
    an edited node shows what it said before. `template` is the template an operator's inject took the
    node from, if any.
    """

    model_config = ConfigDict(validate_assignment=False)

    id: str
    parent: str | None = None
    type: NodeType = NodeType.UNKNOWN
    status: Status = Status.UNVISITED
    description: str
    action: str | None = None
    score: float | None = None
    origin: Origin = Origin.PLANNER
    protected: bool = False
    revisions: int = 0
    url: str | None = None
    step_created: int = 0
    reason: str | None = None
    forced: str | None = None
    earlier: tuple[str, ...] = ()
    earlier_actions: tuple[str, ...] = ()
    children: list[str] = Field(default_factory=list)
    template: TemplateRef | None = None

    @property
    def depth(self) -> int:
        return self.id.count(".")

    @property
    def edited(self) -> bool:
        """Whether an operator changed what the node says (its description or its action), which ✎
        marks: a node they only reopened or protected says what it said."""
        return self.protected and bool(self.earlier or self.earlier_actions)


class Tree:
    """Nodes by id, with the root at `ROOT_ID`. Child order is the order of `Node.children`."""

    __slots__ = ("nodes",)

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}

    @property
    def root(self) -> Node:
        return self.nodes[ROOT_ID]

    def __getitem__(self, node_id: str) -> Node:
        return self.nodes[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, node_id: str) -> Node | None:
        return self.nodes.get(node_id)

    def children(self, node: Node) -> list[Node]:
        nodes = self.nodes
        return [nodes[c] for c in node.children]

    def parent(self, node: Node) -> Node | None:
        return self.nodes[node.parent] if node.parent is not None else None

    def ancestors(self, node: Node) -> Iterator[Node]:
        """Parent first, root last."""
        while node.parent is not None:
            node = self.nodes[node.parent]
            yield node

    def descendants(self, node: Node) -> Iterator[Node]:
        stack = list(reversed(node.children))
        while stack:
            child = self.nodes[stack.pop()]
            yield child
            stack.extend(reversed(child.children))

    def walk(self) -> Iterator[Node]:
        """Every node in depth-first, child order."""
        if ROOT_ID in self.nodes:
            yield self.root
            yield from self.descendants(self.root)

    def new_child_ids(self, node: Node, count: int) -> list[str]:
        """The ids of `count` children about to be added to `node`, in order.

        Ids are never reused: children are only ever closed, not removed, so numbering on from the
        number of children gives a fresh id whether the planner or an operator adds them.
        """
        base = len(node.children)
        return [f"{node.id}.{base + i}" for i in range(1, count + 1)]
