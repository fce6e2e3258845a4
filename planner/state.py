"""Session state as a fold over events.

`apply(state, event)` is the only way state changes, live or on rebuild: the engine and the operator
commands produce drafts, `Recorder.record` sequences and applies them. Rebuilding a session is
`replay(events)` over the stored log, the same code path as running it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from planner.actions import is_note
from planner.config import EngineConfig
from planner.errors import EventOrderError
from planner.events import SCHEMA_VERSIONS, Event, Kind
from planner.status import CLOSED, check_transition
from planner.tree import ROOT_ID, Node, NodeType, Origin, Status, Tree

__all__ = ["TERMINAL", "Approval", "Metrics", "Recorder", "RunStatus", "SessionState", "apply", "replay"]


_EXTRACTS_CONSTRAINTS: bool = EngineConfig.model_fields["constraints"].default


class RunStatus(StrEnum):
    RUNNING = "running"
    PAUSED = "paused"
    AWAITING_APPROVAL = "awaiting_approval"
    STOPPED = "stopped"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED})


@dataclass(slots=True)
class Approval:
    """A guarded action waiting for an operator's decision."""

    node_id: str
    action: str
    rule: str


@dataclass(slots=True)
class Metrics:
    model_calls: int = 0
    model_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    actions: int = 0
    failed_actions: int = 0
    repairs: int = 0
    repair_attempts: int = 0
    rollbacks: int = 0
    commands_applied: int = 0
    commands_rejected: int = 0


@dataclass(slots=True)
class SessionState:
    """Everything known about one session after some prefix of its events.

    `constraints` is None until extracted (or set by an operator). `candidates` holds the items the
    task may be answered with, by name, as the observations reported them. `proposals` maps unexpanded
    node ids to actions a model planned ahead on the current page; any page change clears them.
    """

    task: str = ""
    start_url: str | None = None
    model: str = ""
    model_data: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    tree: Tree = field(default_factory=Tree)
    status: RunStatus = RunStatus.RUNNING
    reason: str | None = None
    seq: int = 0
    steps: int = 0
    url: str | None = None
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    progress: str = ""
    feedback: str = ""
    summary: str = ""
    page_text: str = ""
    constraints: list[str] | None = None
    candidates: dict[str, dict[str, Any]] = field(default_factory=dict)
    proposals: dict[str, str] = field(default_factory=dict)
    final_answer: str | None = None
    single_step: bool = False
    approval: Approval | None = None
    approved_node: str | None = None
    breakpoint_passed: str | None = None
    current: str | None = None
    last_screenshot: str | None = None
    handled_commands: set[str] = field(default_factory=set)
    forked_from: tuple[str, int] | None = None
    metrics: Metrics = field(default_factory=Metrics)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL

    @property
    def over_budget(self) -> str | None:
        """Why the run may not call the model again (its cost cap is spent), or None."""
        cap = self.config.get("max_cost_usd")
        if cap is None or self.metrics.cost_usd < cap:
            return None
        return f"cost budget spent: ${self.metrics.cost_usd:.4f} of ${cap:g}; raise it to go on"

    @property
    def awaits_constraints(self) -> bool:
        """Constraint extraction has yet to run: it is the first thing a session does, unless switched off."""
        return self.constraints is None and bool(self.config.get("constraints", _EXTRACTS_CONSTRAINTS))


def _session_created(state: SessionState, event: Event) -> None:
    data = event.data
    state.task = data["task"]
    state.start_url = data.get("start_url")
    state.url = data.get("start_url")
    state.model = data.get("model", "")
    state.model_data = data.get("model_data", {})
    state.config = data.get("config", {})
    state.status = RunStatus(data.get("status", RunStatus.RUNNING))
    state.tree.nodes[ROOT_ID] = Node(id=ROOT_ID, description=data["task"], url=state.url)


def _session_forked(state: SessionState, event: Event) -> None:
    state.forked_from = (event.data["from_session"], event.data["at_seq"])
    state.status = RunStatus.PAUSED
    state.reason = f"forked from {event.data['from_session']} at event {event.data['at_seq']}"
    state.handled_commands.clear()
    state.single_step = False


def _session_status(state: SessionState, event: Event) -> None:
    state.status = RunStatus(event.data["status"])
    state.reason = event.data.get("reason")
    state.single_step = bool(event.data.get("single_step", False))
    if event.data.get("breakpoint_node"):
        state.breakpoint_passed = event.data["breakpoint_node"]
    if state.status is not RunStatus.AWAITING_APPROVAL:
        state.approval = None


def _session_finished(state: SessionState, event: Event) -> None:
    state.status = RunStatus(event.data["status"])
    state.reason = event.data.get("reason")
    state.final_answer = event.data.get("final_answer")
    state.current = None


def _config_changed(state: SessionState, event: Event) -> None:
    state.config = {**state.config, **event.data["changes"]}


def _constraints_set(state: SessionState, event: Event) -> None:
    state.constraints = list(event.data["constraints"])


def _step(state: SessionState, event: Event) -> None:
    state.steps += 1
    state.current = event.node_id


def _new_node(state: SessionState, parent: Node, spec: dict[str, Any], origin: Origin) -> Node:
    """Events were validated when they were made; constructing without re-validation keeps replay fast."""
    node = Node.model_construct(
        id=spec["id"],
        parent=parent.id,
        description=spec["description"],
        score=spec.get("score"),
        origin=origin,
        protected=origin is Origin.OPERATOR,
        url=state.url,
        step_created=state.steps,
        children=[],  # given, not defaulted: pydantic inspects a default factory's signature on every construct
    )
    state.tree.nodes[node.id] = node
    if spec.get("action"):
        state.proposals[node.id] = spec["action"]
    return node


def _node_expanded(state: SessionState, event: Event) -> None:
    data = event.data
    node = state.tree[event.node_id]
    check_transition(node, Status.VISITED)
    node.type = NodeType(data["type"])
    node.status = Status.VISITED
    node.reason = None
    state.proposals.pop(node.id, None)
    if node.type is NodeType.ACTION:
        node.action = data["action"]
    origin = Origin(data.get("origin", Origin.PLANNER))
    for spec in data.get("children", ()):
        node.children.append(_new_node(state, node, spec, origin).id)


def _nodes_added(state: SessionState, event: Event) -> None:
    data = event.data
    parent = state.tree[event.node_id]
    if data.get("parent_type"):
        parent.type = NodeType(data["parent_type"])
        state.proposals.pop(parent.id, None)
        if parent.status is Status.FAIL:
            parent.status = Status.VISITED
    origin = Origin(data["origin"])
    position = data.get("position")
    ids = [_new_node(state, parent, spec, origin).id for spec in data["nodes"]]
    if position is None:
        parent.children.extend(ids)
    else:
        parent.children[position:position] = ids


def _status_changed(state: SessionState, event: Event) -> None:
    data = event.data
    node = state.tree[event.node_id]
    new = Status(data["status"])
    check_transition(node, new)
    node.status = new
    node.reason = data.get("reason")
    if node.id == ROOT_ID:
        state.final_answer = data.get("answer")
    if new in CLOSED:
        state.proposals.pop(node.id, None)
    if data.get("subtree"):
        for child in state.tree.descendants(node):
            if child.status not in CLOSED:
                child.status = new
                child.reason = data.get("reason")
                state.proposals.pop(child.id, None)


def _node_rewritten(state: SessionState, event: Event) -> None:
    node = state.tree[event.node_id]
    node.description = event.data["description"]
    state.proposals.pop(node.id, None)
    if event.data.get("by") == Origin.OPERATOR:
        node.protected = True


def _node_reset(state: SessionState, event: Event) -> None:
    """Back to UNVISITED: unexpanded again unless it is an action that should simply run again."""
    node = state.tree[event.node_id]
    check_transition(node, Status.UNVISITED)
    node.status = Status.UNVISITED
    node.reason = event.data.get("reason")
    node.forced = None
    state.proposals.pop(node.id, None)
    if node.id == ROOT_ID:
        state.final_answer = None
    if node.type is not NodeType.ACTION or event.data.get("reexpand"):
        node.type = NodeType.UNKNOWN
        node.action = None
    if event.data.get("by") == Origin.OPERATOR:
        node.protected = True


def _revision_used(state: SessionState, event: Event) -> None:
    state.tree[event.node_id].revisions += 1
    state.metrics.repair_attempts += 1
    if event.data.get("ok"):
        state.metrics.repairs += 1


def _alternative_forced(state: SessionState, event: Event) -> None:
    state.tree[event.node_id].forced = event.data["child"]


def _action_executed(state: SessionState, event: Event) -> None:
    data = event.data
    node = state.tree[event.node_id]
    new = Status.SUCCESS if data["ok"] else Status.FAIL
    check_transition(node, new)
    node.status = new
    node.reason = data.get("error")
    state.metrics.actions += 1
    if not data["ok"]:
        state.metrics.failed_actions += 1
    if not is_note(data["action"]):
        state.proposals.clear()
    _see_page(state, data)
    if data.get("screenshot"):
        state.last_screenshot = data["screenshot"]
    if state.approved_node == node.id:
        state.approved_node = None


def _action_edited(state: SessionState, event: Event) -> None:
    node = state.tree[event.node_id]
    node.action = event.data["action"]
    node.protected = True


def _approval_requested(state: SessionState, event: Event) -> None:
    state.approval = Approval(event.node_id, event.data["action"], event.data["rule"])
    state.status = RunStatus.AWAITING_APPROVAL
    state.reason = f"approval required: {event.data['rule']}"


def _approval_granted(state: SessionState, event: Event) -> None:
    state.approved_node = event.node_id
    state.approval = None
    state.status = RunStatus.RUNNING
    state.reason = None


def _observed(state: SessionState, event: Event) -> None:
    state.progress = event.data.get("progress", state.progress)
    state.summary = event.data.get("summary", state.summary)
    state.feedback = event.data.get("feedback", "")
    state.notes.extend(event.data.get("notes", ()))
    for proposal in event.data.get("ahead", ()):
        state.proposals[proposal["node"]] = proposal["action"]
    for candidate in event.data.get("candidates", ()):
        known = state.candidates.get(candidate["name"], {})
        fields = {**known.get("fields", {}), **candidate["fields"]}
        state.candidates[candidate["name"]] = {**candidate, "fields": fields, "seen_at": event.node_id}


def _note_added(state: SessionState, event: Event) -> None:
    state.notes.append(event.data["text"])


def _model_call(state: SessionState, event: Event) -> None:
    metrics = state.metrics
    metrics.model_calls += 1
    if not event.data.get("ok", True):
        metrics.model_errors += 1
    usage = event.data.get("usage") or {}
    metrics.input_tokens += _usage_value(usage, "input_tokens")
    metrics.output_tokens += _usage_value(usage, "output_tokens")
    metrics.cache_read_tokens += _usage_value(usage, "cache_read_tokens")
    metrics.cache_write_tokens += _usage_value(usage, "cache_write_tokens")
    metrics.cost_usd += _usage_value(usage, "cost_usd")


def _usage_value(usage: dict[str, Any], key: str) -> Any:
    """A recorded count or cost, or 0 when it is not a finite number >= 0.

    The adapters validate usage before recording it; this keeps logs written before they did from
    pulling the session's cost below zero, where a cost cap could never trigger.
    """
    value = usage.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        return 0
    return value


def _see_page(state: SessionState, data: dict[str, Any]) -> None:
    if data.get("url"):
        state.url = data["url"]
        state.title = data.get("title")
    if data.get("observation") is not None:
        state.page_text = data["observation"]


def _page_observed(state: SessionState, event: Event) -> None:
    state.proposals.clear()
    _see_page(state, event.data)


def _rollback(state: SessionState, event: Event) -> None:
    state.metrics.rollbacks += 1
    state.proposals.clear()
    if event.data.get("ok"):
        _see_page(state, event.data)


def _command_handled(state: SessionState, event: Event) -> None:
    state.handled_commands.add(event.data["command_id"])
    if event.kind is Kind.COMMAND_APPLIED:
        state.metrics.commands_applied += 1
    else:
        state.metrics.commands_rejected += 1


def _ignore(state: SessionState, event: Event) -> None:
    return None


_HANDLERS: dict[Kind, Callable[[SessionState, Event], None]] = {
    Kind.SESSION_CREATED: _session_created,
    Kind.SESSION_FORKED: _session_forked,
    Kind.SESSION_STATUS: _session_status,
    Kind.SESSION_FINISHED: _session_finished,
    Kind.STEP: _step,
    Kind.CONFIG_CHANGED: _config_changed,
    Kind.CONSTRAINTS_SET: _constraints_set,
    Kind.NODE_EXPANDED: _node_expanded,
    Kind.NODES_ADDED: _nodes_added,
    Kind.STATUS_CHANGED: _status_changed,
    Kind.NODE_REWRITTEN: _node_rewritten,
    Kind.NODE_RESET: _node_reset,
    Kind.REVISION_USED: _revision_used,
    Kind.ALTERNATIVE_FORCED: _alternative_forced,
    Kind.ACTION_EXECUTED: _action_executed,
    Kind.ACTION_EDITED: _action_edited,
    Kind.APPROVAL_REQUESTED: _approval_requested,
    Kind.APPROVAL_GRANTED: _approval_granted,
    Kind.OBSERVED: _observed,
    Kind.NOTE_ADDED: _note_added,
    Kind.MODEL_CALL: _model_call,
    Kind.UPDATE_REFUSED: _ignore,
    Kind.ROLLBACK: _rollback,
    Kind.PAGE_OBSERVED: _page_observed,
    Kind.COMMAND_APPLIED: _command_handled,
    Kind.COMMAND_REJECTED: _command_handled,
}


def apply(state: SessionState, event: Event) -> None:
    """Fold one event into `state`; refuses any event that is not the next in sequence."""
    if event.seq != state.seq + 1:
        raise EventOrderError(f"event {event.seq} applied after {state.seq}; expected {state.seq + 1}")
    _HANDLERS[event.kind](state, event)
    state.seq = event.seq


def replay(events: Iterable[Event], state: SessionState | None = None) -> SessionState:
    """Rebuild state from a log prefix (or continue folding onto `state`)."""
    state = state if state is not None else SessionState()
    for event in events:
        apply(state, event)
    return state


class Recorder:
    """Sequences drafts, applies them to the live state and collects them for the store."""

    __slots__ = ("_clock", "events", "state")

    def __init__(self, state: SessionState, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.events: list[Event] = []
        self._clock = clock

    def record(self, kind: Kind, node_id: str | None = None, **data: Any) -> Event:
        event = Event(self.state.seq + 1, kind, node_id, data, SCHEMA_VERSIONS[kind], self._clock())
        apply(self.state, event)
        self.events.append(event)
        return event

    def take(self) -> list[Event]:
        events, self.events = self.events, []
        return events
