"""What changed between two versions of a plan: the timeline marks it, and a fork is compared with
its parent through it.

Nodes are never deleted from a tree (pruned and deleted ones stay as history), so two versions of
one session's plan differ by nodes that exist in only one of them and by nodes whose status, type or
description moved. A fork copies its parent's ids up to the fork point, so the same comparison says
where a fork and its parent went separate ways.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.tree import Tree

__all__ = ["PlanDiff", "plan_diff"]


@dataclass(frozen=True, slots=True)
class PlanDiff:
    """`added`: only in the later plan; `missing`: only in the earlier; `changed`: in both, different."""

    added: tuple[str, ...]
    missing: tuple[str, ...]
    changed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.missing or self.changed)


def plan_diff(before: Tree, after: Tree) -> PlanDiff:
    """Node ids added, missing and changed (status, type or description) from `before` to `after`, in id order."""
    old, new = before.nodes, after.nodes
    changed = [
        node_id
        for node_id in old.keys() & new.keys()
        if (old[node_id].status, old[node_id].type, old[node_id].description)
        != (new[node_id].status, new[node_id].type, new[node_id].description)
    ]

    def ordered(ids: object) -> tuple[str, ...]:
        return tuple(sorted(ids, key=lambda node_id: [int(part) for part in node_id.split(".")]))  # type: ignore[arg-type]

    return PlanDiff(
        added=ordered(new.keys() - old.keys()), missing=ordered(old.keys() - new.keys()), changed=ordered(changed)
    )
