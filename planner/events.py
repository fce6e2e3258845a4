"""Events: the only record of what happened, and the only input to state.

Every change the engine, an operator command or the runner makes is one of these. An event has a
kind, a per-kind schema version and a JSON-ready payload; older payloads are upgraded on load by the
small functions in `_UPGRADES`, so stored sessions stay readable as payloads evolve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["SCHEMA_VERSIONS", "Event", "Kind", "upgrade"]


class Kind(StrEnum):
    SESSION_CREATED = "session_created"
    SESSION_FORKED = "session_forked"
    SESSION_STATUS = "session_status"
    SESSION_FINISHED = "session_finished"
    CONFIG_CHANGED = "config_changed"
    CONSTRAINTS_SET = "constraints_set"
    STEP = "step"
    NODE_EXPANDED = "node_expanded"
    NODES_ADDED = "nodes_added"
    STATUS_CHANGED = "status_changed"
    NODE_REWRITTEN = "node_rewritten"
    NODE_RESET = "node_reset"
    REVISION_USED = "revision_used"
    ALTERNATIVE_FORCED = "alternative_forced"
    ACTION_EXECUTED = "action_executed"
    ACTION_EDITED = "action_edited"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_GRANTED = "approval_granted"
    OBSERVED = "observed"
    PAGE_OBSERVED = "page_observed"
    NOTE_ADDED = "note_added"
    MODEL_CALL = "model_call"
    UPDATE_REFUSED = "update_refused"
    ROLLBACK = "rollback"
    COMMAND_APPLIED = "command_applied"
    COMMAND_REJECTED = "command_rejected"


SCHEMA_VERSIONS: dict[str, int] = {kind.value: 1 for kind in Kind}


@dataclass(frozen=True, slots=True)
class Event:
    """A sequenced, immutable event of one session."""

    seq: int
    kind: Kind
    node_id: str | None
    data: dict[str, Any]
    version: int = 1
    at: float = 0.0

    def to_row(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind.value, "node_id": self.node_id, "detail": self.data}


_UPGRADES: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""(kind, from_version) -> function returning the payload at from_version + 1."""


def upgrade(kind: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored payload up to the current schema version of its kind."""
    current = SCHEMA_VERSIONS[kind]
    while version < current:
        data = _UPGRADES[(kind, version)](data)
        version += 1
    return data
